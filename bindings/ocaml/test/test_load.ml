(* The loader and interop through the OCaml binding (`dune test`; meson: binding-ocaml): a safetensors
   file written here byte by byte, loaded onto two memory devices, every tensor's bytes, dtype and shape
   checked; a checkpoint of two shards opened by its index and its directory (shards, metadata, bytes); a device's wait refusing another device's point; points as descriptors; device pointers as
   buffers (on memory devices, and on the CUDA double where meson's binding-ocaml names it). *)

open Rig

let failures = ref 0
let passes = ref 0
let skips = ref 0

let check cond what =
  print_endline ((if cond then "ok   " else "FAIL ") ^ what);
  if cond then incr passes else incr failures

let expect_error f status what =
  match f () with
  | _ -> check false (what ^ " raises Rig.Error")
  | exception Error e ->
      check (e.status = status && e.message <> "")
        (Printf.sprintf "%s raises %s with rig's message (got %s: %S)" what (Status.name status) e.name e.message)

let required backend =
  List.mem backend (String.split_on_char ',' (String.map (fun c -> if c = '+' then ',' else c)
                                                (Option.value ~default:"" (Sys.getenv_opt "RIG_REQUIRE"))))

(* Skips with the reason, or fails where RIG_REQUIRE names the backend. *)
let skip_or_fail backend why =
  if required backend then check false ("RIG_REQUIRE names " ^ backend ^ ": " ^ why)
  else (incr skips; print_endline ("SKIP " ^ why))

let le64 n = String.init 8 (fun i -> Char.chr (Int64.to_int (Int64.logand (Int64.shift_right_logical n (8 * i)) 0xffL)))

let f32s fs = String.concat "" (List.map (fun f -> String.sub (le64 (Int64.of_int32 (Int32.bits_of_float f))) 0 4) fs)

(* (name, safetensors dtype, Dtype, shape, bytes), in name order: rig's index order for safetensors. *)
let tensors =
  [
    ("a.weight", "F32", Dtype.F32, [ 2L; 2L ], f32s [ 1.0; 2.0; -3.5; 0.25 ]);
    ("b.bias", "U8", Dtype.U8, [ 3L ], "\007\008\009");
    ("c.scale", "BF16", Dtype.Bf16, [ 1L; 2L; 1L ], "\x80\x3f\x00\x40");
    ("d.steps", "I32", Dtype.I32, [ 1L ], "\xff\xff\xff\xff");
  ]

(* Writes [tensors] to [path] as a safetensors file: 8-byte little-endian header length, the JSON header
   (with [meta], a JSON object, as __metadata__ where it is not empty), the data. *)
let write_safetensors_at ?(meta = "") path tensors =
  let offset = ref 0 in
  let entries =
    List.map
      (fun (name, dtype, _, shape, data) ->
        let start = !offset in
        offset := start + String.length data;
        Printf.sprintf "%S:{\"dtype\":%S,\"shape\":[%s],\"data_offsets\":[%d,%d]}" name dtype
          (String.concat "," (List.map Int64.to_string shape)) start !offset)
      tensors
  in
  let entries = if meta = "" then entries else ("\"__metadata__\":" ^ meta) :: entries in
  let header = "{" ^ String.concat "," entries ^ "}" in
  let oc = open_out_bin path in
  output_string oc (le64 (Int64.of_int (String.length header)));
  output_string oc header;
  List.iter (fun (_, _, _, _, data) -> output_string oc data) tensors;
  close_out oc

let write_safetensors () =
  let path = Filename.temp_file "rig-ocaml" ".safetensors" in
  write_safetensors_at path tensors;
  path

(* The test's shards: the tensors two by two, as Hugging Face's save_pretrained names them. *)
let shard_names = [ "model-00001-of-00002.safetensors"; "model-00002-of-00002.safetensors" ]

(* Writes the tensors as a checkpoint of two shards and its index in a new directory; returns it. *)
let write_checkpoint () =
  let dir = Filename.temp_file "rig-ocaml" ".checkpoint" in
  Sys.remove dir;
  Unix.mkdir dir 0o700;
  let first = List.filteri (fun i _ -> i < 2) tensors and second = List.filteri (fun i _ -> i >= 2) tensors in
  write_safetensors_at ~meta:"{\"format\":\"pt\",\"shard\":\"first\"}" (Filename.concat dir (List.nth shard_names 0)) first;
  write_safetensors_at ~meta:"{\"format\":\"pt\"}" (Filename.concat dir (List.nth shard_names 1)) second;
  let total = List.fold_left (fun n (_, _, _, _, data) -> n + String.length data) 0 tensors in
  let map = List.mapi (fun i (name, _, _, _, _) -> Printf.sprintf "%S:%S" name (List.nth shard_names (i / 2))) tensors in
  let oc = open_out_bin (Filename.concat dir "model.safetensors.index.json") in
  Printf.fprintf oc "{\"metadata\":{\"total_size\":%d,\"note\":\"two shards\"},\"weight_map\":{%s}}" total
    (String.concat "," map);
  close_out oc;
  dir

(* A sharded checkpoint opens by its index and by its directory as one table: its shards, its metadata
   (the index's own by key, numbers as JSON, then the first shard's keys not already there) and every
   tensor's bytes on a memory device. *)
let load_checkpoint () =
  let dir = write_checkpoint () in
  let index = Filename.concat dir "model.safetensors.index.json" in
  let want_meta = [ ("note", "two shards"); ("total_size", "27"); ("format", "pt"); ("shard", "first") ] in
  List.iter
    (fun path ->
      let file = Load.open_file path in
      check (Load.format file = Load.Safetensors) (path ^ ": safetensors");
      let shards = Load.shards file in
      check (List.length shards = 2) (Printf.sprintf "%s: two shards (%d)" path (List.length shards));
      List.iteri
        (fun i (s : Load.shard) ->
          let name = List.nth shard_names i in
          let size = (Unix.stat (Filename.concat dir name)).Unix.st_size in
          check
            (Filename.basename s.path = name && s.bytes = Int64.of_int size)
            (Printf.sprintf "%s: shard %d is %s of %Ld bytes (file: %d)" path i s.path s.bytes size))
        shards;
      let meta = Load.metadata file in
      check (meta = want_meta)
        (Printf.sprintf "%s: metadata [%s]" path (String.concat "; " (List.map (fun (k, v) -> k ^ "=" ^ v) meta)));
      let listed = Load.tensors file in
      check (List.length listed = List.length tensors) (path ^ ": every tensor listed");
      List.iteri
        (fun i ((name, dtype_name, dtype, shape, data), (t : Load.tensor)) ->
          check
            (t.name = name && t.dtype = dtype && t.dtype_name = dtype_name && t.shape = shape
            && t.length = Int64.of_int (String.length data) && t.shard = i / 2)
            (Printf.sprintf "%s: tensor %d: %s %s in shard %d" path i t.name t.dtype_name t.shard))
        (List.combine tensors listed);
      let a = memory_device "A" in
      let load = Load.start file [ a ] in
      Load.wait load;
      List.iteri
        (fun i (name, _, _, _, data) ->
          check (Buffer.to_string (Load.buffer load i ~device:0) = data) (Printf.sprintf "%s: %s's bytes on A" path name))
        tensors;
      Load.release load;
      Load.release_file file)
    [ index; dir ];
  (* a shard missing: Not_found, naming it *)
  Sys.remove (Filename.concat dir (List.nth shard_names 1));
  (match Load.open_file index with
  | _ -> check false "a missing shard raises Rig.Error"
  | exception Error e ->
      check
        (e.status = Status.Not_found && Str.string_match (Str.regexp (".*" ^ Str.quote (List.nth shard_names 1))) e.message 0)
        ("a missing shard raises Not_found naming it: " ^ e.message));
  List.iter (fun n -> Sys.remove (Filename.concat dir n)) [ List.nth shard_names 0; "model.safetensors.index.json" ];
  Unix.rmdir dir

let load_two_devices () =
  let path = write_safetensors () in
  let file = Load.open_file path in
  let listed = Load.tensors file in
  check (List.length listed = List.length tensors) "every tensor listed";
  List.iteri
    (fun i ((name, dtype_name, dtype, shape, data), (t : Load.tensor)) ->
      check
        (t.name = name && t.dtype = dtype && t.dtype_name = dtype_name && t.shape = shape
        && t.length = Int64.of_int (String.length data))
        (Printf.sprintf "tensor %d: %s %s %s [%s]" i t.name (Dtype.to_string t.dtype) t.dtype_name
           (String.concat "; " (List.map Int64.to_string t.shape)));
      check (Load.find file name = i) ("find " ^ name))
    (List.combine tensors listed);
  let a = memory_device "A" and b = memory_device "B" in
  let load = Load.start file [ a; b ] in
  Load.wait load;
  List.iteri
    (fun i (name, _, _, _, data) ->
      List.iteri
        (fun d dev ->
          let buf = Load.buffer load i ~device:d in
          check (Buffer.to_string buf = data) (Printf.sprintf "%s's bytes on device %d" name d);
          let p = Interop.last_write buf in
          check (p <> Point.none) (Printf.sprintf "%s on device %d: its last write is the load's copy" name d);
          Device.wait ~timeout:0.0 dev p)
        [ a; b ])
    tensors;
  expect_error (fun () -> Load.buffer load 0 ~device:2) Status.Invalid_argument "a device past the placement";
  expect_error (fun () -> Load.find file "missing") Status.Not_found "a missing name";
  expect_error (fun () -> Load.start file []) Status.Invalid_argument "a load onto no device";
  expect_error (fun () -> Load.tensor file 99) Status.Invalid_argument "an index past the count";
  Load.release load;
  Load.release_file file;
  Sys.remove path

(* A GGUF v3 file by hand: keys in no sorted order (a string, a u32, a string), one F32 tensor of ne [4, 2]
   at offset 0, the data aligned to GGUF's default 32 bytes. *)
let write_gguf data =
  let b = Stdlib.Buffer.create 256 in
  let u32 n = Stdlib.Buffer.add_string b (String.sub (le64 (Int64.of_int n)) 0 4) in
  let u64 n = Stdlib.Buffer.add_string b (le64 (Int64.of_int n)) in
  let str s = u64 (String.length s); Stdlib.Buffer.add_string b s in
  Stdlib.Buffer.add_string b "GGUF";
  u32 3;
  u64 1 (* tensors *);
  u64 3 (* key/values *);
  str "general.architecture"; u32 8; str "llama";
  str "llama.block_count"; u32 4; u32 2;
  str "a.note"; u32 8; str "after the others";
  str "tok.w"; u32 2; u64 4; u64 2; u32 0 (* F32 *); u64 0;
  while Stdlib.Buffer.length b mod 32 <> 0 do Stdlib.Buffer.add_char b '\000' done;
  Stdlib.Buffer.add_string b data;
  let path = Filename.temp_file "rig-ocaml" ".gguf" in
  let oc = open_out_bin path in
  Stdlib.Buffer.output_buffer oc b;
  close_out oc;
  path

(* A GGUF file's metadata keeps the file's key order (a list, not a table), numbers in decimal. *)
let gguf_metadata_order () =
  let data = f32s [ 1.0; 2.0; 3.0; 4.0; 5.0; 6.0; 7.0; 8.0 ] in
  let path = write_gguf data in
  let file = Load.open_file path in
  check (Load.format file = Load.Gguf) "a GGUF file's format";
  let meta = Load.metadata file in
  check
    (meta = [ ("general.architecture", "llama"); ("llama.block_count", "2"); ("a.note", "after the others") ])
    (Printf.sprintf "GGUF metadata in file order: [%s]" (String.concat "; " (List.map (fun (k, v) -> k ^ "=" ^ v) meta)));
  let size = (Unix.stat path).Unix.st_size in
  check (Load.shards file = [ { Load.path; bytes = Int64.of_int size } ]) "a single file is its one shard";
  let t = Load.tensor file 0 in
  check (t.name = "tok.w" && t.dtype = Dtype.F32 && t.shape = [ 2L; 4L ] && t.shard = 0) "the GGUF tensor, ne reversed";
  let load = Load.start file [ memory_device "A" ] in
  Load.wait load;
  check (Buffer.to_string (Load.buffer load 0 ~device:0) = data) "the GGUF tensor's bytes on A";
  Load.release load;
  Load.release_file file;
  Sys.remove path

let bad_files () =
  expect_error (fun () -> Load.open_file "/nonexistent/model.safetensors") Status.Not_found "a missing file";
  let path = Filename.temp_file "rig-ocaml" ".safetensors" in
  let oc = open_out_bin path in
  output_string oc (le64 200L ^ "{");
  close_out oc;
  expect_error (fun () -> Load.open_file path) Status.Invalid_argument "a truncated header";
  Sys.remove path

let fill d byte =
  let x = Buffer.create d 8 in
  (x, submit d [ Submission.fill ~dst:0 byte ] [ (x, Write) ])

let typed_points () =
  let a = memory_device "A" and b = memory_device "B" in
  let _, p = fill a 'a' in
  check (Point.value p = 1L && Point.device_index p > 0) ("the first point of A: " ^ Point.to_string p);
  Device.wait ~timeout:0.0 a p;
  expect_error (fun () -> Device.wait ~timeout:0.0 b p) Status.Invalid_argument "B waiting for A's point (B has none)";
  ignore (fill b 'b');
  expect_error (fun () -> Device.wait ~timeout:0.0 b p) Status.Invalid_argument "B waiting for A's point";
  Device.wait b Point.none;
  check ((p :> int64) = (Device.point a 1L :> int64)) "a point reads as rig's packed integer"

let point_fds () =
  let a = memory_device "A" in
  check (Interop.supported a Interop.Host_fd) "a memory device's points become descriptors";
  let _, p = fill a 'f' in
  let fd = Interop.point_fd p in
  (* an eventfd: readable once the point is reached (a memory device ran the fill inline) *)
  let readable, _, _ = Unix.select [ fd ] [] [] 10.0 in
  check (readable = [ fd ]) "the point's descriptor is readable";
  let counter = Bytes.create 8 in
  check (Unix.read fd counter 0 8 = 8 && Bytes.get_int64_le counter 0 <> 0L) "it reads a non-zero counter";
  Unix.close fd;
  check (not (Interop.supported a Interop.Sync_fd)) "a memory device has no sync files";
  expect_error (fun () -> Interop.export_sync_fd p) Status.Unsupported "a memory device's sync file";
  expect_error (fun () -> Interop.export_semaphore_fd p) Status.Unsupported "a memory device's semaphore";
  expect_error (fun () -> Interop.import_sync_fd a None) Status.Unsupported "a sync file imported on a memory device"

let vulkan_sync_fd () =
  match Device.open_ "vulkan:0" with
  | exception Error e -> skip_or_fail "vulkan" ("no vulkan:0: " ^ e.message)
  | v ->
      let x = Buffer.create v 64 and y = Buffer.create v 64 in
      let p = submit v [ Submission.copy ~src:0 ~dst:1 () ] [ (x, Read); (y, Write) ] in
      if not (Interop.supported v Interop.Sync_fd) then begin
        expect_error (fun () -> Interop.export_sync_fd p) Status.Unsupported "vulkan:0's sync file, where it says it has none";
        (* RIG_REQUIRE asks for the backend, not each optional extension of it (lavapipe has none). *)
        (incr skips; print_endline "SKIP vulkan:0 has no sync files")
      end
      else begin
        let fd = Interop.export_sync_fd p in
        let q = Interop.import_sync_fd v fd in
        Option.iter Unix.close fd;
        Device.wait v q;
        wait_point ~timeout:0.0 p;
        check true "a Vulkan point left and returned as a sync file"
      end

let device_pointers () =
  let a = memory_device "A" in
  check (Interop.supported a Interop.Device_pointer) "a memory device's pointers become buffers";
  let owner = Buffer.of_string "device bytes" in
  let owner_on_a = Buffer.borrow a owner in
  let address = Interop.device_address owner_on_a in
  let released = ref false in
  let w = Interop.wrap_device ~release:(fun () -> released := true) a ~address ~length:12 in
  check (Interop.device_address w = address) "the wrap's address";
  check (Buffer.to_string w = "device bytes") "the wrap's bytes";
  let view = Buffer.view w ~offset:7 ~length:5 in
  check (Interop.device_address view = Int64.add address 7L) "a view's address";
  Buffer.release view;
  Buffer.release w;
  check !released "the wrap's release ran once its buffers were released";
  expect_error (fun () -> Interop.wrap_device a ~address:0L ~length:16) Status.Invalid_argument "a null address with a length";
  match Device.open_ "cuda:0" with
  | exception Error e -> skip_or_fail "cuda" ("no cuda:0 (meson's binding-ocaml names the CUDA double): " ^ e.message)
  | d ->
      let x = Buffer.create d 8 in
      let src = Bigarray.Array1.init Bigarray.char Bigarray.c_layout 8 (fun i -> "cuda ptr".[i]) in
      Buffer.write_from x ~offset:0 src;
      let y = Interop.wrap_device d ~address:(Interop.device_address x) ~length:8 in
      check (Buffer.to_string y = "cuda ptr") "a CUDA pointer wrapped sees the same bytes";
      Buffer.release y;
      Buffer.release x

let () =
  load_two_devices ();
  load_checkpoint ();
  gguf_metadata_order ();
  bad_files ();
  typed_points ();
  point_fds ();
  vulkan_sync_fd ();
  device_pointers ();
  Printf.printf "binding-ocaml (load, interop): %d passed, %d failed, %d skipped\n" !passes !failures !skips;
  exit (if !failures = 0 then 0 else 1)
