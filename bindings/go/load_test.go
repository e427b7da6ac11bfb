package rig_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rig.dev/rig"
)

// stTensor is one tensor of the safetensors file the tests write.
type stTensor struct {
	name, dtype string
	want        rig.Dtype
	shape       []uint64
	data        []byte
}

func f32s(fs ...float32) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(f))
	}
	return b.Bytes()
}

// testTensors are in name order, rig's index order for safetensors.
var testTensors = []stTensor{
	{"a.weight", "F32", rig.F32, []uint64{2, 2}, f32s(1, 2, -3.5, 0.25)},
	{"b.bias", "U8", rig.U8, []uint64{3}, []byte{7, 8, 9}},
	{"c.scale", "BF16", rig.BF16, []uint64{1, 2, 1}, []byte{0x80, 0x3f, 0x00, 0x40}},
	{"d.ids", "I16", rig.I16, []uint64{2}, []byte{1, 0, 0xff, 0xff}},
}

// writeSafetensors writes testTensors as one file, model.safetensors.
func writeSafetensors(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	writeSafetensorsAt(t, path, testTensors, nil)
	return path
}

// writeSafetensorsAt writes tensors to path by hand: 8-byte little-endian header length, JSON header
// (with meta as __metadata__ where it is not nil), data.
func writeSafetensorsAt(t *testing.T, path string, tensors []stTensor, meta map[string]string) {
	header := map[string]interface{}{}
	if meta != nil {
		header["__metadata__"] = meta
	}
	var data []byte
	for _, x := range tensors {
		header[x.name] = map[string]interface{}{"dtype": x.dtype, "shape": x.shape,
			"data_offsets": []int{len(data), len(data) + len(x.data)}}
		data = append(data, x.data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	binary.Write(&file, binary.LittleEndian, uint64(len(h)))
	file.Write(h)
	file.Write(data)
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeCheckpoint writes testTensors as a checkpoint of two shards (two tensors each) and its index, the
// way Hugging Face's save_pretrained lays one out; it returns the directory, the index and the shards.
func writeCheckpoint(t *testing.T) (dir, index string, shards []string) {
	dir = t.TempDir()
	shards = []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	writeSafetensorsAt(t, filepath.Join(dir, shards[0]), testTensors[:2], map[string]string{"format": "pt", "shard": "first"})
	writeSafetensorsAt(t, filepath.Join(dir, shards[1]), testTensors[2:], map[string]string{"format": "pt"})
	weightMap, total := map[string]string{}, 0
	for i, x := range testTensors {
		weightMap[x.name] = shards[i/2]
		total += len(x.data)
	}
	h, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"total_size": total, "note": "two shards"},
		"weight_map": weightMap})
	if err != nil {
		t.Fatal(err)
	}
	index = filepath.Join(dir, "model.safetensors.index.json")
	if err := os.WriteFile(index, h, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, index, shards
}

// A sharded checkpoint opens by its index and by its directory as one table: its shards, its metadata
// (the index's own by key, numbers as JSON, then the first shard's keys not already there) and every
// tensor's bytes on a memory device.
func TestACheckpointOfTwoShardsOpensByItsIndexAndItsDirectory(t *testing.T) {
	dir, index, shardNames := writeCheckpoint(t)
	wantMeta := rig.Metadata{{Key: "note", Value: "two shards"}, {Key: "total_size", Value: "27"},
		{Key: "format", Value: "pt"}, {Key: "shard", Value: "first"}}
	for _, path := range []string{index, dir} {
		f := must(rig.OpenLoadFile(path))
		if format := must(f.Format()); format != rig.FormatSafetensors || format.String() != "safetensors" {
			t.Errorf("%s: format %v", path, format)
		}
		shards := must(f.Shards())
		if len(shards) != len(shardNames) {
			t.Fatalf("%s: %d shards, want %d", path, len(shards), len(shardNames))
		}
		for i, s := range shards {
			info, err := os.Stat(filepath.Join(dir, shardNames[i]))
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(s.Path) != shardNames[i] || s.Bytes != uint64(info.Size()) {
				t.Errorf("%s: shard %d is %+v, want %s of %d bytes", path, i, s, shardNames[i], info.Size())
			}
		}
		meta := must(f.Metadata())
		if len(meta) != len(wantMeta) {
			t.Errorf("%s: metadata %v, want %v", path, meta, wantMeta)
		}
		for i := range wantMeta {
			if i < len(meta) && meta[i] != wantMeta[i] {
				t.Errorf("%s: metadata %d is %v, want %v", path, i, meta[i], wantMeta[i])
			}
		}
		if v, ok := meta.Get("format"); !ok || v != "pt" || meta.Map()["total_size"] != "27" {
			t.Errorf("%s: metadata lookups in %v", path, meta)
		}
		listed := must(f.Tensors())
		if len(listed) != len(testTensors) {
			t.Fatalf("%s: %d tensors, want %d", path, len(listed), len(testTensors))
		}
		for i, x := range testTensors {
			got := listed[i]
			if got.Name != x.name || got.Dtype != x.want || got.Shard != i/2 || fmt.Sprint(got.Shape) != fmt.Sprint(x.shape) {
				t.Errorf("%s: tensor %d is %+v, want %s %v %v in shard %d", path, i, got, x.name, x.want, x.shape, i/2)
			}
		}
		a := must(rig.MemoryDevice("A"))
		load := must(f.Load([]*rig.Device{a}, rig.Each))
		if err := load.Wait(); err != nil {
			t.Fatal(err)
		}
		for i, x := range testTensors {
			if got := must(must(load.Buffer(i, 0)).Bytes()); !bytes.Equal(got, x.data) {
				t.Errorf("%s: %s on A: % x, want % x", path, x.name, got, x.data)
			}
		}
		load.Close()
		f.Close()
	}
	// a shard missing: NotFound naming it
	os.Remove(filepath.Join(dir, shardNames[1]))
	_, err := rig.OpenLoadFile(index)
	var e *rig.Error
	if !errors.As(err, &e) || e.Status != rig.NotFound || !strings.Contains(e.Message, shardNames[1]) {
		t.Errorf("a missing shard: %v", err)
	}
}

func TestASafetensorsFileLoadsOntoTwoMemoryDevices(t *testing.T) {
	f := must(rig.OpenLoadFile(writeSafetensors(t)))
	defer f.Close()
	listed := must(f.Tensors())
	if len(listed) != len(testTensors) {
		t.Fatalf("%d tensors listed, want %d", len(listed), len(testTensors))
	}
	for i, x := range testTensors {
		got := listed[i]
		if got.Name != x.name || got.Dtype != x.want || got.DtypeName != x.dtype || got.Length != uint64(len(x.data)) {
			t.Errorf("tensor %d: %+v, want %s %v (%s) of %d bytes", i, got, x.name, x.want, x.dtype, len(x.data))
		}
		if len(got.Shape) != len(x.shape) {
			t.Errorf("%s: shape %v, want %v", x.name, got.Shape, x.shape)
		}
		for j := range x.shape {
			if j < len(got.Shape) && got.Shape[j] != x.shape[j] {
				t.Errorf("%s: shape %v, want %v", x.name, got.Shape, x.shape)
			}
		}
		if k := must(f.Find(x.name)); k != i {
			t.Errorf("Find(%q) = %d, want %d", x.name, k, i)
		}
	}
	a, b := must(rig.MemoryDevice("A")), must(rig.MemoryDevice("B"))
	load := must(f.Load([]*rig.Device{a, b}, rig.Each))
	defer load.Close()
	if err := load.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, x := range testTensors {
		for d, dev := range []*rig.Device{a, b} {
			buf := must(load.Buffer(i, d))
			if got := must(buf.Bytes()); !bytes.Equal(got, x.data) {
				t.Errorf("%s on device %d: % x, want % x", x.name, d, got, x.data)
			}
			// the tensor's last write is the load's copy on that device: its own wait takes it
			p := must(buf.LastWrite())
			if p == 0 {
				t.Errorf("%s on device %d: no last write", x.name, d)
			} else if err := dev.WaitTimeout(p, rig.Forever); err != nil {
				t.Errorf("%s: %v", x.name, err)
			}
		}
	}
	if _, err := load.Buffer(0, 2); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Errorf("a device past the placement: %v", err)
	}
	if _, err := f.Load(nil, rig.Each); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Errorf("a load onto no device: %v", err)
	}
	if _, err := f.Tensor(-1); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Errorf("a negative index: %v", err)
	}
	if _, err := f.Find("missing"); !errors.Is(err, &rig.Error{Status: rig.NotFound}) {
		t.Errorf("a missing name: %v", err)
	}
	if rig.BF16.String() != "BF16" || rig.Ggml.String() != "GGML" {
		t.Errorf("dtype names: %v %v", rig.BF16, rig.Ggml)
	}
}

func TestBadWeightsFilesAnswerWithRigsMessage(t *testing.T) {
	_, err := rig.OpenLoadFile("/nonexistent/model.safetensors")
	if !errors.Is(err, &rig.Error{Status: rig.NotFound}) {
		t.Fatalf("a missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "truncated.safetensors")
	os.WriteFile(path, []byte{200, 0, 0, 0, 0, 0, 0, 0, '{'}, 0o600)
	_, err = rig.OpenLoadFile(path)
	var e *rig.Error
	if !errors.As(err, &e) || e.Status != rig.InvalidArgument || e.Message == "" {
		t.Fatalf("a truncated header: %v", err)
	}
	t.Log(err)
}

// A device's wait takes only its own points: a point of another device is refused with a message (a
// plain integer, the mistake of issue 33, no longer compiles: Wait takes a Point).
func TestADevicesWaitRefusesAnotherDevicesPoint(t *testing.T) {
	a, b := must(rig.MemoryDevice("A")), must(rig.MemoryDevice("B"))
	x := must(rig.CreateBuffer(a, 8, rig.MemDevice))
	p := must(rig.Submit(a, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: 1}}, []rig.Slot{{x, rig.Write}}))
	if p.Value() != 1 || p.DeviceIndex() == 0 || !strings.HasPrefix(p.String(), "device#") {
		t.Fatalf("the first point of A: %v", p)
	}
	if err := a.WaitTimeout(p, 0); err != nil {
		t.Fatal(err)
	}
	err := b.WaitTimeout(p, 0)
	if !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) || !strings.Contains(err.Error(), p.String()) {
		t.Fatalf("B waiting for A's point: %v", err)
	}
	// B with points of its own: still not A's
	must(rig.Submit(b, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: 2}}, []rig.Slot{{must(rig.CreateBuffer(b, 8, rig.MemDevice)), rig.Write}}))
	err = b.WaitTimeout(p, 0)
	if !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) || !strings.Contains(err.Error(), p.String()) {
		t.Fatalf("B, with a point of its own, waiting for A's point: %v", err)
	}
	t.Log(err)
	if err := b.WaitTimeout(0, 0); err != nil {
		t.Fatalf("the zero point: %v", err)
	}
}

func TestAPointsFileIsReadableOnceReached(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	if !must(a.Supports(rig.HostFd)) {
		t.Fatal("a memory device without host fds")
	}
	x := must(rig.CreateBuffer(a, 8, rig.MemDevice))
	p := must(rig.Submit(a, []rig.Part{rig.FillPart{Dst: 0, Length: rig.Whole, Byte: 1}}, []rig.Slot{{x, rig.Write}}))
	f := must(p.File())
	defer f.Close()
	// an eventfd: a read gives its counter, non-zero, once the point is reached (a memory device ran the
	// fill inline, so the read does not block)
	counter := make([]byte, 8)
	if n, err := f.Read(counter); err != nil || n != 8 || binary.LittleEndian.Uint64(counter) == 0 {
		t.Fatalf("read %d bytes % x: %v", n, counter, err)
	}
	// memory devices have neither sync files nor timeline semaphores: rig says so
	if must(a.Supports(rig.SyncFd)) {
		t.Fatal("a memory device with sync files")
	}
	if _, err := p.ExportSyncFile(); !errors.Is(err, &rig.Error{Status: rig.Unsupported}) {
		t.Fatalf("a memory device's sync file: %v", err)
	}
	if _, _, err := p.ExportSemaphore(); !errors.Is(err, &rig.Error{Status: rig.Unsupported}) {
		t.Fatalf("a memory device's semaphore: %v", err)
	}
	if _, err := a.ImportSyncFile(nil); !errors.Is(err, &rig.Error{Status: rig.Unsupported}) {
		t.Fatalf("a sync file imported on a memory device: %v", err)
	}
}

func required(backend string) bool {
	for _, b := range strings.FieldsFunc(os.Getenv("RIG_REQUIRE"), func(r rune) bool { return r == ',' || r == '+' }) {
		if b == backend {
			return true
		}
	}
	return false
}

// skipOrFail skips with the reason, or fails where RIG_REQUIRE names the backend.
func skipOrFail(t *testing.T, backend, why string) {
	if required(backend) {
		t.Fatalf("RIG_REQUIRE names %s: %s", backend, why)
	}
	t.Skip("SKIP: " + why)
}

func TestAVulkanPointLeavesAndReturnsAsASyncFile(t *testing.T) {
	v, err := rig.OpenDevice("vulkan:0")
	if err != nil {
		skipOrFail(t, "vulkan", "no vulkan:0: "+err.Error())
	}
	x := must(rig.CreateBuffer(v, 64, rig.MemDevice))
	y := must(rig.CreateBuffer(v, 64, rig.MemDevice))
	p := must(rig.Submit(v, []rig.Part{rig.Copy(0, 1)}, []rig.Slot{{x, rig.Read}, {y, rig.Write}}))
	if !must(v.Supports(rig.SyncFd)) {
		_, err := p.ExportSyncFile()
		if !errors.Is(err, &rig.Error{Status: rig.Unsupported}) {
			t.Fatalf("a sync file where vulkan:0 says it has none: %v", err)
		}
		// RIG_REQUIRE asks for the backend, not each optional extension of it (lavapipe has no sync files).
		t.Skip("SKIP: vulkan:0 has no sync files: " + err.Error())
	}
	f := must(p.ExportSyncFile())
	q := must(v.ImportSyncFile(f))
	if f != nil {
		f.Close()
	}
	if err := v.WaitTimeout(q, rig.Forever); err != nil {
		t.Fatal(err)
	}
	if err := rig.WaitPointTimeout(p, 0); err != nil {
		t.Fatalf("the exported point, once its import is reached: %v", err)
	}
}

func TestHostMemoryWrapsAsAMemoryDevicesPointer(t *testing.T) {
	a := must(rig.MemoryDevice("A"))
	if !must(a.Supports(rig.DevicePointer)) {
		t.Fatal("a memory device without device pointers")
	}
	// memory outside Go's heap (rig keeps the address past this call): a buffer rig made
	owner := must(rig.CreateBuffer(a, 12, rig.MemDevice))
	if err := owner.WriteFrom(0, []byte("device bytes")); err != nil {
		t.Fatal(err)
	}
	address := must(owner.DeviceAddress())
	released := make(chan struct{})
	w := must(rig.WrapDevice(a, address, 12, func() { close(released) }))
	if got := must(w.DeviceAddress()); got != address {
		t.Fatalf("the wrap's address %#x, want %#x", got, address)
	}
	if got := must(w.Bytes()); string(got) != "device bytes" {
		t.Fatalf("the wrap's bytes: %q", got)
	}
	view := must(w.View(7, 5))
	if got := must(view.DeviceAddress()); got != address+7 {
		t.Fatalf("a view's address %#x, want %#x", got, address+7)
	}
	view.Close()
	w.Close()
	select { // the release runs once the last buffer over the wrap is released
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("the wrap's release never ran")
	}
	owner.Close()
	if _, err := rig.WrapDevice(a, 0, 16, nil); !errors.Is(err, &rig.Error{Status: rig.InvalidArgument}) {
		t.Fatalf("a null address with a length: %v", err)
	}
}

func TestACudaPointerWrappedSeesTheSameBytes(t *testing.T) {
	d, err := rig.OpenDevice("cuda:0")
	if err != nil {
		skipOrFail(t, "cuda", "no cuda:0 (meson's binding-go names the CUDA double): "+err.Error())
	}
	x := must(rig.CreateBuffer(d, 8, rig.MemDevice))
	if err := x.WriteFrom(0, []byte("cuda ptr")); err != nil {
		t.Fatal(err)
	}
	address := must(x.DeviceAddress())
	y := must(rig.WrapDevice(d, address, 8, nil))
	if got := must(y.Bytes()); string(got) != "cuda ptr" {
		t.Fatalf("the wrapped pointer's bytes: %q", got)
	}
	y.Close()
	x.Close()
}

// writeGGUF writes a GGUF v3 file by hand: keys in no sorted order (a string, a u32, a string), one F32
// tensor of ne [4, 2] at offset 0, the data aligned to GGUF's default 32 bytes.
func writeGGUF(t *testing.T, data []byte) string {
	var b bytes.Buffer
	le := func(v interface{}) { binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	le(uint32(3))
	le(uint64(1)) // tensors
	le(uint64(3)) // key/values
	str("general.architecture")
	le(uint32(8))
	str("llama")
	str("llama.block_count")
	le(uint32(4))
	le(uint32(2))
	str("a.note")
	le(uint32(8))
	str("after the others")
	str("tok.w")
	le(uint32(2))
	le([]uint64{4, 2})
	le(uint32(0)) // F32
	le(uint64(0))
	for b.Len()%32 != 0 {
		b.WriteByte(0)
	}
	b.Write(data)
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A GGUF file's metadata keeps the file's key order (a slice, not a map), numbers in decimal.
func TestAGGUFFilesMetadataKeepsItsKeyOrder(t *testing.T) {
	data := f32s(1, 2, 3, 4, 5, 6, 7, 8)
	path := writeGGUF(t, data)
	f := must(rig.OpenLoadFile(path))
	defer f.Close()
	if format := must(f.Format()); format != rig.FormatGGUF {
		t.Errorf("format %v", format)
	}
	want := rig.Metadata{{Key: "general.architecture", Value: "llama"}, {Key: "llama.block_count", Value: "2"},
		{Key: "a.note", Value: "after the others"}}
	if meta := must(f.Metadata()); fmt.Sprint(meta) != fmt.Sprint(want) {
		t.Errorf("metadata %v, want %v", meta, want)
	}
	info := must(os.Stat(path))
	if shards := must(f.Shards()); len(shards) != 1 || shards[0].Path != path || shards[0].Bytes != uint64(info.Size()) {
		t.Errorf("shards %+v, want %s of %d bytes", shards, path, info.Size())
	}
	tensor := must(f.Tensor(0))
	if tensor.Name != "tok.w" || tensor.Dtype != rig.F32 || fmt.Sprint(tensor.Shape) != "[2 4]" || tensor.Shard != 0 {
		t.Errorf("tensor %+v", tensor)
	}
	a := must(rig.MemoryDevice("A"))
	load := must(f.Load([]*rig.Device{a}, rig.Each))
	defer load.Close()
	if err := load.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := must(must(load.Buffer(0, 0)).Bytes()); !bytes.Equal(got, data) {
		t.Errorf("tok.w on A: % x, want % x", got, data)
	}
}
