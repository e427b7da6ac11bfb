#!/bin/sh
# CI (scripts/test-all.sh, a few seconds): fails when the lists of build dependencies drift apart.
# Every dependency(), has_header() and find_program() that a meson.build names is traced to the Debian
# package that provides it on this machine (pkg-config's file, the header or the program, through dpkg -S;
# scripts/deps.sh installs them first), and that package must be in:
#   - scripts/deps.sh's list for the part of the tree asking for it: lib (meson.build, src, tools, docs),
#     test (tests, fuzz), all (bindings, bench);
#   - debian/control's Build-Depends for what the package build configures (lib, the Python binding);
#   - the apt-get line of bindings/python/README.md for what the wheel builds (the library, the binding).
# A name that resolves to no package fails too: install it, or list it below with the reason it needs none.
#   scripts/deps-check.sh
set -eu
cd "$(dirname "$0")/.."
PATH=/usr/sbin:/usr/bin:/sbin:/bin export PATH  # Debian's programs, not a user's rustup or pyenv shims
# Names that need no package of their own: meson's built-ins, rig's own targets, and the StarPU that
# Debian 12 does not have (bench/core tries starpu-1.4, then Debian's starpu-1.3).
ignore=" threads rig starpu-1.4 "
# What meson finds without naming it: python.find_installation().dependency() is python3-dev; the
# wheel's build backend is python3-mesonpy.
extra_python="python3-dev python3-mesonpy"
status=0
fail() { echo "deps-check: $*" >&2; status=1; }

# The package that provides one name of kind dependency|has_header|find_program, or nothing.
package_of() {
  kind=$1 name=$2 path=""
  case "$kind" in
    dependency) path=$(pkg-config --path "$name" 2>/dev/null) || path="" ;;
    has_header) for d in /usr/include /usr/include/x86_64-linux-gnu; do
        [ -e "$d/$name" ] && { path=$d/$name; break; }; done ;;
    find_program) case "$name" in
        /*) path=$name ;;
        *) path=$(command -v "$name" 2>/dev/null) || path="" ;;
      esac ;;
  esac
  [ -n "$path" ] || return 0
  # dpkg -S names the package that owns the path as installed (a /usr/bin link, not its target's owner);
  # python3-minimal is the part of python3 that holds the interpreter.
  dpkg -S "$path" 2>/dev/null | sed -n '1s/:.*//p' | sed 's/^python3-minimal$/python3/'
}

# The names a set of meson.build files asks for, one "kind name" a line. Programs in the tree (scripts,
# relative paths) and names built at configure time (no literal) are not packages.
names_in() {
  find "$@" -name meson.build 2>/dev/null | xargs grep -ohE "(dependency|has_header|find_program)\('[^']+'" \
    | sed -E "s/^([a-z_]+)\('([^']+)'$/\1 \2/" | grep -vE "^find_program ([^/].*/|.*\.(sh|py)$)" | sort -u
}

# Packages a part of the tree needs: "part dir..." -> one package a line.
packages_for() {
  names_in "$@" | while read -r kind name; do
    case "$ignore" in *" $name "*) continue ;; esac
    p=$(package_of "$kind" "$name")
    if [ -z "$p" ]; then echo "?$kind('$name')"; else echo "$p"; fi
  done | sort -u
}

check() {  # what, packages (space separated), list (space separated)
  for p in $2; do
    case "$p" in
      \?*) fail "$1: ${p#\?} resolves to no installed package (scripts/deps.sh all installs the lists)" ;;
      *) case " $3 " in *" $p "*) ;; *) fail "$1: $p is missing" ;; esac ;;
    esac
  done
}

deps_list() { scripts/deps.sh --list "$1" | tr '\n' ' '; }
lib_packages=$(packages_for meson.build src tools docs | tr '\n' ' ')
test_packages=$(packages_for tests fuzz | tr '\n' ' ')
other_packages=$(packages_for bindings bench | tr '\n' ' ')
python_packages="$(packages_for meson.build src bindings/meson.build bindings/python | tr '\n' ' ') $extra_python"
# A compiler, meson, ninja and pkg-config (meson's dependency() asks it) are needed without being named.
base="gcc g++ meson ninja-build pkg-config"

check "scripts/deps.sh lib (meson.build, src, tools, docs)" "$base $lib_packages" "$(deps_list lib)"
check "scripts/deps.sh test (tests, fuzz)" "$test_packages" "$(deps_list test)"
check "scripts/deps.sh all (bindings, bench)" "$other_packages" "$(deps_list all)"

# debian/control: Build-Depends without versions or alternatives' extras.
build_depends=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' debian/control | sed '$d' \
  | sed 's/^Build-Depends://' | tr ',' '\n' | sed -E 's/\(.*\)//; s/\[.*\]//; s/^[[:space:]]+//; s/[[:space:]]+$//' \
  | grep -v '^$' | tr '\n' ' ')
debian_needs=$(printf '%s\n' $base $lib_packages $(packages_for bindings/meson.build bindings/python) python3-dev \
  | grep -vxE 'gcc|meson|python3' | sort -u | tr '\n' ' ')
check "debian/control Build-Depends" "$debian_needs" "$build_depends"

# bindings/python/README.md: the apt-get line of its build section (with its continuation lines, up to a
# comment). The wheel builds no man page.
readme_line=$(sed -n '/^apt-get install/{:a;/\\$/{N;ba};p;q}' bindings/python/README.md | sed 's/#.*//' | tr -d '\\\n')
[ -n "$readme_line" ] || fail "bindings/python/README.md: no 'apt-get install' line"
python_needs=$(printf '%s\n' $base $python_packages | grep -vxE 'gcc|scdoc|python3' | sort -u | tr '\n' ' ')
check "bindings/python/README.md's apt-get line" "$python_needs" "${readme_line#apt-get install}"

# The lists name only packages that exist (a typo would pass every check above that does not use it).
for p in $(deps_list all); do
  apt-cache show --no-all-versions "$p" > /dev/null 2>&1 || fail "scripts/deps.sh: no Debian package $p"
done
[ $status = 0 ] && echo "deps-check: scripts/deps.sh, debian/control and bindings/python/README.md agree with meson.build"
exit $status
