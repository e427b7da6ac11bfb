#!/usr/bin/env bash
# Sourced by scripts/gpu/vulkan.sh and issue36.sh on the GPU machine: `vulkan_env BUILD` unpacks the Vulkan
# loader and validation layer carried in BUILD/vulkan-debs (vulkan.sh --fetch; no apt there), uses the
# machine's loader where it has one, and points the loader at NVIDIA's ICD only (vulkan:0 is the H200),
# writing a manifest for libGLX_nvidia.so.0 where the container has none. Says each choice through `note`
# (the caller's, else echo); counts a missing loader in `failures`.
vulkan_env() {
  local build=$1
  declare -F note > /dev/null || note() { echo "$*"; }
  failures=${failures:-0}
  # --- the loader and the layer, unpacked from the carried .debs -------------------------------------------
  root=$(mktemp -d /tmp/rig-vulkan.XXXXXX)
  for deb in "$build"/vulkan-debs/*.deb; do
    [ -f "$deb" ] || continue
    if command -v dpkg-deb > /dev/null; then
      dpkg-deb -x "$deb" "$root"
    else  # a .deb is an ar archive holding data.tar.{xz,gz,zst}
      member=$(ar t "$deb" | grep '^data\.tar')
      case $member in
        *.xz) ar p "$deb" "$member" | tar -xJ -C "$root" ;;
        *.gz) ar p "$deb" "$member" | tar -xz -C "$root" ;;
        *.zst) ar p "$deb" "$member" | zstd -dc | tar -x -C "$root" ;;
      esac
    fi
  done
  libdir=$root/usr/lib/x86_64-linux-gnu
  system_loader=$(ldconfig -p 2> /dev/null | awk '/libvulkan\.so\.1 /{print $NF; exit}')
  if [ -n "$system_loader" ] && [ -z "${VULKAN_SH_USE_CARRIED:-}" ]; then
    note "loader: the machine's $system_loader"
    unset RIG_VULKAN_LIBRARY
  elif [ -f "$libdir/libvulkan.so.1" ]; then
    export RIG_VULKAN_LIBRARY=$libdir/libvulkan.so.1
    note "loader: carried $RIG_VULKAN_LIBRARY"
  else
    note "loader: none (no libvulkan.so.1 on the machine and none carried: run --fetch first)"
    failures=$((failures + 1))
  fi
  export LD_LIBRARY_PATH="$build:$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # libcmocka.so.0, the layer

  # --- NVIDIA's ICD -----------------------------------------------------------------------------------------
  manifest=
  for d in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d; do
    for f in "$d"/nvidia_icd*.json; do [ -f "$f" ] && manifest=$f && break 2; done
  done
  if [ -n "$manifest" ]; then
    note "NVIDIA ICD manifest: $manifest"
  else
    glx=$(ldconfig -p 2> /dev/null | awk '/libGLX_nvidia\.so\.0 /{print $NF; exit}')
    [ -z "$glx" ] && glx=$(ls /usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0 /usr/lib64/libGLX_nvidia.so.0 2> /dev/null | head -1)
    if [ -n "$glx" ]; then
      manifest=$root/nvidia_icd.json
      printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\n' "$glx" > "$manifest"
      note "NVIDIA ICD manifest written for $glx"
    else
      note "NVIDIA ICD: no manifest and no libGLX_nvidia.so.0 (the container may lack the graphics capability)"
    fi
  fi
  if [ -n "$manifest" ] && [ -z "${VULKAN_SH_USE_CARRIED:-}" ]; then
    export VK_DRIVER_FILES=$manifest VK_ICD_FILENAMES=$manifest  # only NVIDIA's: vulkan:0 is the H200
  fi
}
