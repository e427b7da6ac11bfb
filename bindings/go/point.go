package rig

import "fmt"

// Point is a value on one device's timeline (rig_point): what Submit returns and what waits, Run.Submit's
// waits and the descriptors of interop take. It is a type of its own so that a timeline value (Submitted,
// Signaled: plain uint64) cannot be passed where a point is meant, nor a point where a value is: the
// compiler refuses either. The zero Point is reached at once.
type Point uint64

// The packing of rig.h (rig_point_make): the device's index above RIG_POINT_VALUE_BITS bits of value.
const (
	pointValueBits = 47
	pointValueMask = 1<<pointValueBits - 1
)

// DeviceIndex is the index of the device whose timeline the point is on (0 for the zero Point).
func (p Point) DeviceIndex() uint32 { return uint32(p>>pointValueBits) & 0xffff }

// Value is the point's value on that timeline.
func (p Point) Value() uint64 { return uint64(p) & pointValueMask }

// String is "device#INDEX:VALUE", or "none" for the zero Point.
func (p Point) String() string {
	if p == 0 {
		return "none"
	}
	return fmt.Sprintf("device#%d:%d", p.DeviceIndex(), p.Value())
}

// rawPoints is points as the raw layer takes them.
func rawPoints(points []Point) []uint64 {
	out := make([]uint64, len(points))
	for i, p := range points {
		out[i] = uint64(p)
	}
	return out
}
