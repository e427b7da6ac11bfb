// Package raw is the layer SWIG generates from bindings/swig/rig.i (with go.i): rig's C functions with
// rig's shape (a status returned, out-pointers as one-element slices, handles as uintptr). It is internal:
// only package rig.dev/rig builds on it.
//
// The generated files (rig.go, rig_wrap.c) are made by `go generate` in this directory (gen.sh runs
// swig 4.1 over the repository's bindings/swig and include/, or over RIG_SWIG_DIR and RIG_INCLUDE_DIR);
// the meson build runs the same generation, and `meson install` ships them in the module.
//
// librig is found by pkg-config alone: PKG_CONFIG_PATH naming the directory of an installed rig.pc is
// all a build needs.
package raw

/*
#cgo pkg-config: rig
*/
import "C"

//go:generate sh gen.sh
