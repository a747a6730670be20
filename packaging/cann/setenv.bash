#!/bin/bash
# For older CANN samples, which source bin/setenv.bash: the same as set_env.sh.
# shellcheck source=../set_env.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/set_env.sh"
