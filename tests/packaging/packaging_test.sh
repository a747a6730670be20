#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# usage: tests/packaging/packaging_test.sh CMAKE_BUILD_DIR WORK_DIR
# The user's way in, on the host, without touching the system (TAP):
# `make install` into a DESTDIR and `make uninstall` out of it; the one
# version number everywhere; DKMS add/build/install of the module for each
# kernel of kernel/kernels.conf with private trees; and three consumer projects
# built outside the tree against the installed package (pkg-config, CMake
# find_package, and a CANN project against the CANN-compatible root).
# Leaves in WORK_DIR what packaging_guest.sh runs in a guest: stage/ (the
# installed package), dkms/module/KVER/npuipc.ko (what DKMS installed),
# dkms/depmod/KVER (depmod's index of that kernel's modules and it) and
# consumers/*/build.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cmake_dir=$(cd "$1" && pwd)
work=$2
version=$(cat "$top/VERSION")
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
stage=$work/stage
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$cmake_dir/CMakeCache.txt")
root=$stage$prefix
lib=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$cmake_dir/CMakeCache.txt")
libdir=$root/$lib
# shellcheck source=tests/tap.sh
. "$top/tests/tap.sh"
tap_plan 14

# 1-2. install and uninstall
expected=(
	"$lib/libnpuipc.so.$version" "$lib/libnpuipc.so.0" "$lib/libnpuipc.so"
	include/acl/acl.h include/acl/acl_rt.h include/acl/acl_base.h
	include/acl/acl_base_rt.h include/acl/acl_base_mdl.h include/acl/acl_rt_allocator.h
	include/acl/error_codes/rt_error_codes.h include/acl/error_codes/ge_error_codes.h
	include/acl/acl_seed_compat.h
	include/npuipc/device.h include/npuipc/ipc.h include/drm/npuipc_drm.h
	"$lib/pkgconfig/npuipc.pc" "$lib/cmake/npuipc/npuipcConfig.cmake"
	"$lib/cmake/npuipc/npuipcConfigVersion.cmake" "$lib/cmake/npuipc/npuipcTargets.cmake"
	lib/npuipc/cann/include/acl/acl.h lib/npuipc/cann/lib64/libascendcl.so
	lib/npuipc/cann/lib64/stub/libascendcl.so lib/npuipc/cann/runtime/include/acl/acl.h
	lib/npuipc/cann/set_env.sh lib/npuipc/cann/bin/setenv.bash
	bin/npuipc-smi share/doc/npuipc/examples/npuipc.conf
	share/man/man1/npuipc-smi.1 share/man/man4/npuipc.4 share/man/man7/npuipc.7
	share/man/man3/aclrt_memory.3 share/man/man3/aclrt_ipc.3 share/man/man3/aclrt_vmm.3
	share/man/man3/aclrt_device_info.3 share/man/man3/aclrtDeviceGetUuid.3
	share/man/man3/aclrtMalloc.3 share/man/man3/aclrtIpcMemImportByKey.3
	lib/udev/rules.d/70-npuipc.rules
	sbin/npuipc-broker share/man/man8/npuipc-broker.8
	sbin/npuipc-fabricd share/man/man8/npuipc-fabricd.8 include/npuipc/fabric.h
	lib/systemd/system/npuipc-broker.socket lib/systemd/system/npuipc-broker.service
)
DESTDIR=$stage "$top/tools/install" install "$cmake_dir" > "$work/install.log" 2>&1
rc=$?
missing=()
for f in "${expected[@]}"; do [ -e "$root/$f" ] || missing+=("$f"); done
soname=$(readelf -d "$libdir/libnpuipc.so.$version" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libnpuipc.so.0 ] || missing+=("soname libnpuipc.so.0 (is '$soname')")
# Only the API leaves the library: acl* and npuipc::.
strays=$(nm -D --defined-only "$libdir/libnpuipc.so.$version" | awk '{ print $3 }' | c++filt |
	grep -v -e '^acl' -e '^npuipc::' -e '^NPUIPC_' -e '^typeinfo.* npuipc::' -e '^vtable for npuipc::' | head -n3)
[ -z "$strays" ] || missing+=("exported: $strays")
[ "$rc" = 0 ] && [ ${#missing[@]} = 0 ]
result $? "make install DESTDIR= puts every file in place (library soname libnpuipc.so.0, only acl* and npuipc:: exported)"
[ ${#missing[@]} = 0 ] || printf '# missing: %s\n' "${missing[@]}"
[ "$rc" = 0 ] || tap_log "$work/install.log"
warnings=$(for page in "$root"/share/man/man*/*; do
	MANPATH=$root/share/man man --warnings=w -l "$page" 2>&1 > /dev/null | sed "s|^|$(basename "$page"): |"
done)
pages=$(ls "$root"/share/man/man*/* 2>/dev/null | wc -l)
[ -z "$warnings" ] && [ "$pages" -ge 80 ] && (cd /tmp && MANPATH=$root/share/man MANWIDTH=200 man 3 aclrtMalloc 2> /dev/null) | grep -q 'aclError aclrtMalloc(void \*\*devPtr'
result $? "$pages man pages render without warnings, and 'man aclrtMalloc' finds its family's page"
[ -z "$warnings" ] || printf '# %s\n' "$warnings"

# Uninstall keeps what was there before: a header of another package in
# include/drm and an empty man1 directory.
scratch=$work/install-uninstall
mkdir -p "$scratch$prefix/include/drm" "$scratch$prefix/share/man/man1"
echo '/* another package */' > "$scratch$prefix/include/drm/drm.h"
DESTDIR=$scratch "$top/tools/install" install "$cmake_dir" > "$work/install2.log" 2>&1 &&
	DESTDIR=$scratch "$top/tools/install" uninstall "$prefix" >> "$work/install2.log" 2>&1
rc=$?
left=$(cd "$scratch" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')
want_left="./usr ./usr/local ./usr/local/include ./usr/local/include/drm ./usr/local/include/drm/drm.h ./usr/local/share ./usr/local/share/man ./usr/local/share/man/man1 "
[ "$prefix" = /usr/local ] || want_left=$left # the list is for the default prefix
[ "$rc" = 0 ] && [ "$left" = "$want_left" ]
result $? "make uninstall (PREFIX, DESTDIR) removes exactly what make install put there, from the record in the install"
[ "$last" = 0 ] || { echo "# left: $left"; tap_log "$work/install2.log"; }
rm -rf "$scratch"

# 4. one version number
mans=$(grep -L "^\.TH .* \"npuipc $version\"" "$root"/share/man/man[1-8]/npuipc* "$root"/share/man/man3/aclrt_*.3 | tr '\n' ' ')
versions=(
	"pkg-config=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --modversion npuipc 2>&1)"
	"dkms.conf=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")"
	"module=$(modinfo -F version "${NPUIPC_MODULE:-$top/kernel/npuipc.ko}" 2>&1)"
	"library=$(readlink "$libdir/libnpuipc.so.0" | sed 's/^libnpuipc\.so\.//')"
	"cmake=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' "$libdir/cmake/npuipc/npuipcConfigVersion.cmake")"
	"man pages without it=${mans:-$version}"
)
bad=()
for v in "${versions[@]}"; do [ "${v#*=}" = "$version" ] || bad+=("$v"); done
[ ${#bad[@]} = 0 ]
result $? "VERSION ($version) is the version of the module, DKMS, the library, both packages and the man pages"
[ ${#bad[@]} = 0 ] || printf '# differs: %s\n' "${bad[@]}"

# 5-8. DKMS: tools/dkms, which make dkms-install and dkms-uninstall run,
# with DKMS_ROOT: private trees, the signing key there too, no depmod, for
# both pinned kernels (-k; the host's running kernel may be neither): the
# system's headers of the first, the unpacked ones of the second.
mapfile -t kvers < <("$top/tools/kernels" list)
kver=${kvers[0]}
dk=$work/dkms
"$top/tools/dkms" source "$dk/src" > /dev/null
content=$(cd "$dk/src/npuipc-$version" && find . -type f | LC_ALL=C sort | tr '\n' ' ')
want_src="./VERSION ./dkms.conf ./kernel/Kbuild ./kernel/Makefile "
! printf '%s' "$content" | grep -Eq '\.(o|ko|cmd|mod|mod\.c)( |$)|tests/|libnpuipc/' &&
	[ "${content#"$want_src"}" != "$content" ] && [ -f "$dk/src/npuipc-$version/uapi/drm/npuipc_drm.h" ]
result $? "the DKMS source tree holds dkms.conf, VERSION, kernel sources and the uapi header only"
[ "$last" = 0 ] || echo "# DKMS tree: $content"

depmod_before=$(stat -c %Y "/lib/modules/$kver/modules.dep" 2>/dev/null)
mok_before=$(ls /var/lib/dkms/mok.key 2>/dev/null)
dkroot=$dk/root
dkms_status() {
	dkms --dkmstree "$dkroot/var/lib/dkms" --sourcetree "$dkroot/usr/src" \
		--installtree "$dkroot/lib/modules" status -m npuipc 2>&1
}
# Twice: the second, for both kernels, replaces the first, for one (an
# upgrade does the same).
DKMS_ROOT=$dkroot "$top/tools/dkms" install "$kver" > "$dk/install.log" 2>&1 &&
	DKMS_ROOT=$dkroot "$top/tools/dkms" install "${kvers[@]}" >> "$dk/install.log" 2>&1
rc=$?
want_status=""
for k in "${kvers[@]}"; do
	want_status+="npuipc/$version, $k, $(uname -m): installed"$'\n'
done
# Each kernel's module carries that kernel's vermagic (the guests load them).
# DKMS compresses it as that kernel's own modules are, when it has them.
installed_ko() { # KVER: the module DKMS installed for KVER
	ls "$dkroot/lib/modules/$1/updates/dkms"/npuipc.ko* 2>/dev/null | head -n1
}
built_for() { # KVER: the module DKMS installed for KVER is built for it
	local ko
	ko=$(installed_ko "$1")
	[ -n "$ko" ] && [ "$(modinfo -F version "$ko" 2>/dev/null)" = "$version" ] &&
		[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$1" ]
}
all_built=0
for k in "${kvers[@]}"; do built_for "$k" || all_built=1; done
[ "$rc" = 0 ] && [ "$all_built" = 0 ] &&
	[ "$(dkms_status | LC_ALL=C sort)" = "$(printf '%s' "$want_status" | LC_ALL=C sort)" ] &&
	cmp -s "$top/packaging/modprobe-npuipc.conf" "$dkroot/etc/modprobe.d/npuipc.conf" &&
	cmp -s "$top/packaging/udev/70-npuipc.rules" "$dkroot/etc/udev/rules.d/70-npuipc.rules"
result $? "make dkms-install builds and installs npuipc $version for $kver, then again for ${kvers[*]}, each module with its kernel's vermagic, with the example modprobe.d file and the udev rule"
[ "$last" = 0 ] || { dkms_status | sed 's/^/# status: /'; tap_log "$dk/install.log"; }
[ "$(stat -c %Y "/lib/modules/$kver/modules.dep" 2>/dev/null)" = "$depmod_before" ] &&
	[ "$(ls /var/lib/dkms/mok.key 2>/dev/null)" = "$mok_before" ]
result $? "DKMS with a private root leaves the system's modules.dep and signing key alone"
# The guests load these copies, each the one for the kernel it boots.
for k in "${kvers[@]}"; do
	mkdir -p "$dk/module/$k"
	ko=$(installed_ko "$k")
	case "$ko" in
	*.xz) xz -dc "$ko" > "$dk/module/$k/npuipc.ko" ;;
	*.zst) zstd -qdc "$ko" > "$dk/module/$k/npuipc.ko" ;;
	?*) cp "$ko" "$dk/module/$k/" ;;
	esac
	# DKMS runs depmod as it installs (not here: private trees). Its result
	# for the guest, over that kernel's modules (linked) and the module,
	# computed here: depmod under TCG reads 6.12's 4,000 compressed modules
	# in over a minute, natively in seconds.
	src=$("$top/tools/kernels" modroot "$k")/lib/modules/$k
	farm=$dk/depmod/$k/lib/modules/$k
	mkdir -p "$farm/updates/dkms"
	for f in "$src"/*; do
		case "$(basename "$f")" in
		modules.order | modules.builtin | modules.builtin.modinfo) cp "$f" "$farm/" ;;
		modules.* | build | source | updates) ;;
		*) ln -s "$f" "$farm/" ;;
		esac
	done
	cp "$dk/module/$k/npuipc.ko" "$farm/updates/dkms/" 2>/dev/null
	depmod -b "$dk/depmod/$k" "$k" 2>&1 | sed 's/^/# depmod: /'
done
DKMS_ROOT=$dkroot "$top/tools/dkms" uninstall > "$dk/uninstall.log" 2>&1
rc=$?
left=$(cd "$dkroot" && find usr/src etc lib/modules -mindepth 1 -not -type d | tr '\n' ' ')
[ "$rc" = 0 ] && [ -z "$(dkms_status)" ] && [ -z "$left" ]
result $? "make dkms-uninstall removes the module from DKMS, its source tree, the udev rule and the example"
[ "$last" = 0 ] || { echo "# left: $left"; tap_log "$dk/uninstall.log"; }

# 9-11. consumer projects, each a copy outside the tree of seed scenarios
consumer() { # NAME FILES...: copies the project and its sources to WORK/consumers/NAME
	local name=$1 d=$work/consumers/$1
	shift
	mkdir -p "$d"
	cp "$top/tests/packaging/consumers/$name"/* "$top/examples/example_util.h" "$d/"
	for f in "$@"; do cp "$top/examples/$f" "$d/"; done
	echo "$d"
}
d=$(consumer pkgconfig ipc_memory_lender.c ipc_memory_borrower.c)
mkdir -p "$d/build"
PKG_CONFIG_PATH=$libdir/pkgconfig make -C "$d/build" -f ../Makefile VPATH=.. > "$d/build.log" 2>&1 &&
	PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs npuipc | grep -q -- "-L$libdir/pkgconfig/"
result $? "a Makefile project builds with pkg-config npuipc (the staged npuipc.pc, not a system one)"
[ "$last" = 0 ] || tap_log "$d/build.log"

d=$(consumer cmake ipc_event_lender.c ipc_event_borrower.c)
{ cmake -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF &&
	cmake --build "$d/build"; } > "$d/build.log" 2>&1 &&
	grep -qx "npuipc_DIR:PATH=$libdir/cmake/npuipc" "$d/build/CMakeCache.txt"
result $? "a CMake project builds with find_package(npuipc) and npuipc::npuipc (the staged package)"
[ "$last" = 0 ] || tap_log "$d/build.log"

d=$(consumer cann ipc_notify_lender.c ipc_notify_borrower.c vmm_lender.c vmm_borrower.c)
cp "$top"/tests/gtest/acl_all_functions.[ch] "$top/tests/gtest/acl_all_functions_cxx.cpp" "$d/"
(
	# shellcheck source=/dev/null
	. "$root/lib/npuipc/cann/set_env.sh"
	cmake -S "$d" -B "$d/build" && cmake --build "$d/build" &&
		"$d/build/all_functions_c" && "$d/build/all_functions_cxx"
) > "$d/build.log" 2>&1
all=$?
needed=$(readelf -d "$d/build/ipc_notify_lender" 2>/dev/null | grep -c 'Shared library: \[libnpuipc.so.0\]')
[ "$needed" = 1 ] && [ "$all" = 0 ]
result $? "a CANN project builds unchanged against the CANN root (set_env.sh, include/, lib64/libascendcl.so), and so do C and C++ programs calling every function of the headers"
[ "$last" = 0 ] || tap_log "$d/build.log"

# 12-14. the environment scripts
env_of() { bash -c ". '$1' && echo \$ASCEND_HOME_PATH:\$ASCEND_INSTALL_PATH:\$ASCEND_CANN_PACKAGE_PATH && echo \$LD_LIBRARY_PATH"; }
cann=$root/lib/npuipc/cann
want="$cann:$cann:$cann"
got=$(env_of "$cann/set_env.sh" | head -n1)
[ "$got" = "$want" ] && env_of "$cann/set_env.sh" | tail -n1 | grep -q "^$cann/lib64"
result $? "set_env.sh (from bash) exports ASCEND_HOME_PATH, ASCEND_INSTALL_PATH, ASCEND_CANN_PACKAGE_PATH and the library path"
got=$(env_of "$cann/bin/setenv.bash" | head -n1)
[ "$got" = "$want" ]
result $? "bin/setenv.bash does the same for older samples"
# From sh, which cannot tell the file's path: the root it was installed
# as, which this staged tree is not, so it refuses rather than guess.
out=$(cd /tmp && sh -c ". '$cann/set_env.sh'; echo rc=\$? home=\$ASCEND_HOME_PATH" 2>&1)
printf '%s' "$out" | grep -q "no npuipc CANN root at $prefix/lib/npuipc/cann" && printf '%s' "$out" | grep -q 'rc=1 home=$'
result $? "set_env.sh from sh uses the installed root and refuses a missing one"
[ "$last" = 0 ] || echo "# $out"
tap_status
