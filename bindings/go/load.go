package rig

import (
	"fmt"
	"runtime"
	"unsafe"

	"rig.dev/rig/internal/raw"
)

// Dtype is a tensor's element type (rig_dtype); the values are pinned by rig_load.h. GGUF's
// block-quantized types are Ggml, with the ggml type number in Tensor.GgmlType.
type Dtype int

// The dtypes of rig_load.h.
const (
	U8     Dtype = 1
	I8     Dtype = 2
	Bool   Dtype = 3
	F8E4M3 Dtype = 4
	F8E5M2 Dtype = 5
	U16    Dtype = 6
	I16    Dtype = 7
	F16    Dtype = 8
	BF16   Dtype = 9
	U32    Dtype = 10
	I32    Dtype = 11
	F32    Dtype = 12
	U64    Dtype = 13
	I64    Dtype = 14
	F64    Dtype = 15
	Ggml   Dtype = 16
)

var dtypeNames = [...]string{"", "U8", "I8", "BOOL", "F8_E4M3", "F8_E5M2", "U16", "I16", "F16", "BF16", "U32", "I32",
	"F32", "U64", "I64", "F64", "GGML"}

// String is safetensors' name of the dtype ("BF16"), "GGML" for a ggml block type.
func (d Dtype) String() string {
	if d > 0 && int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("Dtype(%d)", int(d))
}

// Tensor is one tensor of a weights file (rig_load_tensor).
type Tensor struct {
	Name      string
	Dtype     Dtype
	DtypeName string   // the file's own name of the type ("BF16", "Q4_K")
	GgmlType  uint32   // GGUF: the ggml type number; 0 otherwise
	Shape     []uint64 // outermost first
	Offset    uint64   // absolute byte offset of the tensor's bytes in its file (its shard's)
	Length    uint64
	Shard     int // the checkpoint's file that holds it (an index into Shards); 0 for a single file
}

// Format is what a weights file is (rig_load_format); the values are pinned by rig_load.h.
type Format int

// The formats of rig_load.h (FormatAuto is only ever asked for, never answered).
const (
	FormatAuto        Format = 0
	FormatSafetensors Format = 1
	FormatGGUF        Format = 2
	FormatRaw         Format = 3
)

var formatNames = [...]string{"auto", "safetensors", "gguf", "raw"}

// String is the format's lower-case name ("safetensors").
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Shard is one file of a checkpoint (rig_load_shard_get): its path as rig opened it and its size then.
type Shard struct {
	Path  string
	Bytes uint64
}

// KV is one metadata entry: a key and its value as UTF-8 text (rig_load_metadata_get).
type KV struct{ Key, Value string }

// Metadata is a file's metadata entries in rig's order (GGUF's in file order, safetensors' by key, an
// index's own before its first shard's): a slice, so the order a GGUF file gives is kept.
type Metadata []KV

// Map is the entries as a map, for a lookup by key (keys are unique in rig's list).
func (m Metadata) Map() map[string]string {
	out := make(map[string]string, len(m))
	for _, kv := range m {
		out[kv.Key] = kv.Value
	}
	return out
}

// Get is the value of key, and whether the metadata has it.
func (m Metadata) Get(key string) (string, bool) {
	for _, kv := range m {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// LoadFile is an open weights file and its tensor table (rig_load_file).
type LoadFile struct{ owned }

// OpenLoadFile opens a checkpoint and reads its tensor table, one table over all its files: a
// safetensors or GGUF file (told apart by its first bytes), a sharded safetensors checkpoint by its
// *.index.json or the directory holding it, or the first file of a split GGUF set. It waits for the
// reads. NotFound where the file or a shard does not exist, InvalidArgument naming what is wrong (a
// tensor in two shards, an index naming a tensor its shard lacks, a file that is no weights file).
func OpenLoadFile(path string) (*LoadFile, error) {
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_open(path, raw.RIG_LOAD_FORMAT_AUTO, out) }); err != nil {
		return nil, err
	}
	f := &LoadFile{owned{h: out[0], release: raw.Rig_load_file_release}}
	runtime.SetFinalizer(f, func(f *LoadFile) { f.releaseOnce() })
	return f, nil
}

// Tensors lists the file's tensors in rig's index order (a safetensors file's by name). Pure read.
func (f *LoadFile) Tensors() ([]Tensor, error) {
	defer runtime.KeepAlive(f)
	n := make([]uint64, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_tensor_count(f.h, n) }); err != nil {
		return nil, err
	}
	out := make([]Tensor, n[0])
	for i := range out {
		t, err := f.Tensor(i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// Tensor is tensor index's description; InvalidArgument past the count. Pure read.
func (f *LoadFile) Tensor(index int) (Tensor, error) {
	defer runtime.KeepAlive(f)
	s, n := make([]unsafe.Pointer, 2), make([]int64, 14)
	var t Tensor
	err := call(func() raw.Enum_SS_rig_status {
		st := raw.Rig_go_load_tensor(f.h, int64(index), s, n)
		if st == raw.RIG_OK { // the strings live as long as the file handle: copy them now
			t = Tensor{Name: cString(s[0]), Dtype: Dtype(n[0]), DtypeName: cString(s[1]), GgmlType: uint32(n[1]),
				Offset: uint64(n[3]), Length: uint64(n[4]), Shard: int(n[13])}
		}
		return st
	})
	if err != nil {
		return Tensor{}, err
	}
	rank := int(n[2])
	if rank > 8 {
		rank = 8
	}
	t.Shape = make([]uint64, rank)
	for i := range t.Shape {
		t.Shape[i] = uint64(n[5+i])
	}
	return t, nil
}

// Find is the index of the tensor called name; NotFound if none. Pure read.
func (f *LoadFile) Find(name string) (int, error) {
	defer runtime.KeepAlive(f)
	i := make([]uint64, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_find(f.h, name, i) })
	return int(i[0]), err
}

// Format is what the file is (never FormatAuto: what rig found). Pure read.
func (f *LoadFile) Format() (Format, error) {
	defer runtime.KeepAlive(f)
	out := make([]int32, 1)
	err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_file_format(f.h, out) })
	return Format(out[0]), err
}

// Shards lists the files the checkpoint reads: one for a single file, a sharded checkpoint's in name
// order, a split GGUF set's in split order. Pure read.
func (f *LoadFile) Shards() ([]Shard, error) {
	defer runtime.KeepAlive(f)
	n := make([]uint64, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_shard_count(f.h, n) }); err != nil {
		return nil, err
	}
	out := make([]Shard, n[0])
	for i := range out {
		path, bytes := make([]unsafe.Pointer, 1), make([]uint64, 1)
		err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_shard_get(f.h, int64(i), path, bytes) })
		if err != nil {
			return nil, err
		}
		out[i] = Shard{Path: cString(path[0]), Bytes: bytes[0]} // the path lives as long as f: copied now
	}
	return out, nil
}

// Metadata is the file's metadata: safetensors' __metadata__ strings, a sharded checkpoint's index
// "metadata" (other values as JSON) then its first shard's keys not already there, GGUF's key/values in
// file order (numbers in decimal, short arrays as JSON). Pure read.
func (f *LoadFile) Metadata() (Metadata, error) {
	defer runtime.KeepAlive(f)
	n := make([]uint64, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_metadata_count(f.h, n) }); err != nil {
		return nil, err
	}
	out := make(Metadata, n[0])
	for i := range out {
		key, value := make([]unsafe.Pointer, 1), make([]unsafe.Pointer, 1)
		err := call(func() raw.Enum_SS_rig_status { return raw.Rig_load_metadata_get(f.h, int64(i), key, value) })
		if err != nil {
			return nil, err
		}
		out[i] = KV{Key: cString(key[0]), Value: cString(value[0])}
	}
	return out, nil
}

// Rule is which tensor goes to which device (rig_load_rule).
type Rule int

// The rules of rig_load.h.
const (
	Each    Rule = 0 // every tensor on every device
	ByLayer Rule = 1 // a name's first ".N." number is its layer; layers in contiguous blocks over the devices
)

// Load starts loading every tensor onto devices by rule (default options) and returns the running load
// at once; it waits only for the devices' verdicts (and a probe where one runs), holding no lock of rig's.
func (f *LoadFile) Load(devices []*Device, rule Rule) (*Load, error) {
	defer runtime.KeepAlive(f)
	defer runtime.KeepAlive(devices)
	hs := make([]uintptr, len(devices))
	for i, d := range devices {
		hs[i] = d.h
	}
	out := make([]uintptr, 1)
	if err := call(func() raw.Enum_SS_rig_status { return raw.Rig_go_load_start(f.h, hs, int(rule), out) }); err != nil {
		return nil, err
	}
	l := &Load{owned{h: out[0], release: raw.Rig_load_release}}
	runtime.SetFinalizer(l, func(l *Load) { l.releaseOnce() })
	return l, nil
}

// Close releases the file; loads still running keep it open until they end.
func (f *LoadFile) Close() error { return f.releaseOnce() }

// String names the handle.
func (f *LoadFile) String() string { return f.describe("LoadFile") }

// Load is one load of a file's tensors, running or finished (rig_load).
type Load struct{ owned }

// Wait waits on the host (no lock held) until every copy is submitted, and returns the load's error.
// The devices may still be copying: each tensor's stamps order that for the work that reads it.
func (l *Load) Wait() error {
	defer runtime.KeepAlive(l)
	return call(func() raw.Enum_SS_rig_status { return raw.Rig_load_wait(l.h) })
}

// Buffer is tensor index on the device at position device of Load's devices: a new buffer whose stamps
// carry the copies into it. Waits until those copies are submitted.
func (l *Load) Buffer(index, device int) (*Buffer, error) {
	defer runtime.KeepAlive(l)
	return newBuffer(func(out []uintptr) raw.Enum_SS_rig_status {
		return raw.Rig_load_buffer(l.h, int64(index), int64(device), out)
	})
}

// Close cancels the load if it runs and waits for its threads; buffers handed out stay valid.
func (l *Load) Close() error { return l.releaseOnce() }

// String names the handle.
func (l *Load) String() string { return l.describe("Load") }
