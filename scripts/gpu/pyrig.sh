# Sourced by the GPU scripts (repository root, $B the carried build): rig's Python package for the GPU
# machine's own python3 (the one with torch) in /tmp/pyrig, from this tree's modules and the build's
# generated wrapper (rig_wrap.c) compiled here against that python3 and the carried librig; exports
# PYTHONPATH. The device's python3 is not Debian's, so the build's extension module would not load there.
P=/tmp/pyrig
mkdir -p $P/rig && cp bindings/python/rig/*.py bindings/python/rig/*.pyi bindings/python/rig/py.typed $P/rig/ &&
  cp "$B/bindings/python/rig/rig.py" $P/rig/
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
gcc -O2 -shared -fPIC -w -I"$inc" -Iinclude -I"$B/include" "$B/bindings/python/rig/rig_wrap.c" -o "$P/rig/_rig$ext" \
  -L"$B" -lrig -Wl,-rpath,"$B" && echo "python extension built for $(python3 --version)"
export PYTHONPATH=$P
