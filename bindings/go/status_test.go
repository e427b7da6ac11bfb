package rig

// The Go status values against rig.h's (through the raw layer, which only this package can import).

import (
	"testing"

	"rig.dev/rig/internal/raw"
)

func TestStatusValuesAreRigHs(t *testing.T) {
	pairs := map[Status]raw.Enum_SS_rig_status{OK: raw.RIG_OK, InvalidArgument: raw.RIG_INVALID_ARGUMENT,
		InvalidHandle: raw.RIG_INVALID_HANDLE, Unsupported: raw.RIG_UNSUPPORTED, Unmappable: raw.RIG_UNMAPPABLE,
		OutOfMemory: raw.RIG_OUT_OF_MEMORY, Lost: raw.RIG_LOST, Timeout: raw.RIG_TIMEOUT,
		Interrupted: raw.RIG_INTERRUPTED, Driver: raw.RIG_DRIVER, NotFound: raw.RIG_NOT_FOUND, Busy: raw.RIG_BUSY}
	for s, r := range pairs {
		if Status(r) != s {
			t.Errorf("%v is %d in Go, %d in rig.h", s, int(s), int(r))
		}
	}
}
