// SPDX-License-Identifier: MIT
#include "all_functions_main.c"
