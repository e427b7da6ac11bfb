(* rig.ml: OCaml bindings of rig.h through ctypes (libctypes-ocaml-dev), loading librig.so.0 at run time
   (RIG_LIBRARY names another file).

   Why ctypes and not SWIG's OCaml module: SWIG 4.1 still has -ocaml, but lists it under "Experimental
   Target Language Options"; its wrappers give every C value the one dynamic type Swig.c_obj (C_int,
   C_ptr, C_list ...), so no signature is checked by OCaml's type checker, callbacks need C++ directors,
   and it needs a C stub library compiled for each OCaml version. With ctypes the signatures below are
   typed OCaml values, callbacks are libffi closures over OCaml functions, bytes are Bigarrays that C sees
   without a copy, and nothing is compiled in C.

   Rules kept everywhere here:
   - an exception never unwinds through librig's frames: each callback catches it, answers rig with a
     status, and the call that ran the callback raises it once rig has returned;
   - every closure handed to C stays reachable while C may call it (kept alive past the call, or held by
     the object whose handle reaches it);
   - memory rig keeps beyond a call is a Bigarray (outside OCaml's moving heap), held until rig lets go. *)

open Ctypes
open Foreign

(* librig: RIG_LIBRARY names the file where set; else the libdir this package was built for (Rig_libdir,
   written by the build from pkg-config, so an install in any prefix finds its own librig without
   LD_LIBRARY_PATH); else the dynamic linker's search by soname. *)
let lib =
  let open_ filename = Dl.dlopen ~filename ~flags:[ Dl.RTLD_NOW ] in
  match Sys.getenv_opt "RIG_LIBRARY" with
  | Some filename -> open_ filename
  | None -> (
      let beside = Filename.concat Rig_libdir.libdir "librig.so.0" in
      if Rig_libdir.libdir <> "" && Sys.file_exists beside then open_ beside else open_ "librig.so.0")

let fn name typ = foreign ~from:lib name typ

type host = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

(* ---------------------------------------------------------------------------------------------------- *)
(* Status and errors                                                                                    *)

(* rig_status as C returns it (values pinned by rig.h); Status.t is the OCaml face. *)
let ok = 0
let out_of_memory = 5
let interrupted = 8
let driver = 9
let c_status_name = fn "rig_status_name" (int @-> returning string)

module Status = struct
  type t =
    | Ok
    | Invalid_argument
    | Invalid_handle
    | Unsupported
    | Unmappable
    | Out_of_memory
    | Lost
    | Timeout
    | Interrupted
    | Driver
    | Not_found
    | Busy
    | Other of int

  let all = [| Ok; Invalid_argument; Invalid_handle; Unsupported; Unmappable; Out_of_memory; Lost; Timeout;
               Interrupted; Driver; Not_found; Busy |]

  let of_int n = if n >= 0 && n < Array.length all then all.(n) else Other n

  let to_int = function
    | Other n -> n
    | s ->
        let rec find i = if all.(i) = s then i else find (i + 1) in
        find 0

  let name s = c_status_name (to_int s)
  let pp fmt s = Format.pp_print_string fmt (name s)
end

type status = Status.t

exception Error of { status : Status.t; name : string; message : string }

let c_last_error = fn "rig_last_error" (void @-> returning string)

(* The message is read right after the failed call, on its thread: OCaml 4 runs one thread at a time and
   no call here releases the runtime lock, so no other rig call can come in between. *)
let check st =
  if st <> ok then
    let message = c_last_error () in
    raise (Error { status = Status.of_int st; name = c_status_name st; message })

let () =
  Printexc.register_printer (function
    | Error { name; message; _ } -> Some (Printf.sprintf "Rig.Error(%s: %s)" name message)
    | _ -> None)

(* A callback's exception, kept until the rig call that ran the callback returns. *)
type caught = { mutable exn : (exn * Printexc.raw_backtrace) option }

let caught () = { exn = None }
let keep_exn c e = if c.exn = None then c.exn <- Some (e, Printexc.get_raw_backtrace ())

let reraise c =
  match c.exn with
  | Some (e, bt) ->
      c.exn <- None;
      Printexc.raise_with_backtrace e bt
  | None -> ()

(* The callback's exception first (it is why the call failed, if it did), then the status. *)
let check_after c st =
  reraise c;
  check st

(* ---------------------------------------------------------------------------------------------------- *)
(* Handles                                                                                              *)

let handle = ptr void

(* A handle released once: by release, or by the GC's finaliser. A released one keeps its stale handle,
   so a later use reaches rig and raises rig's own invalid-handle error. *)
type owned = { raw : unit ptr; mutable released : bool; free : unit ptr -> int }

let own free raw =
  let o = { raw; released = false; free } in
  Gc.finalise (fun o -> if not o.released then (o.released <- true; ignore (o.free o.raw))) o;
  o

let release o =
  if not o.released then begin
    o.released <- true;
    check (o.free o.raw)
  end

let out_handle f =
  let p = allocate handle null in
  check (f p);
  !@p

let size = Unsigned.Size_t.of_int
let whole = Unsigned.Size_t.max_int

(* A timeout in seconds in rig's terms: none waits without a bound (UINT64_MAX), 0 or less only checks. *)
let timeout_ns = function
  | None -> Unsigned.UInt64.max_int
  | Some s when s <= 0.0 -> Unsigned.UInt64.zero
  | Some s when s >= 1.8e10 -> Unsigned.UInt64.(pred max_int)
  | Some s -> Unsigned.UInt64.of_int64 (Int64.of_float (s *. 1e9))

(* ---------------------------------------------------------------------------------------------------- *)
(* Points                                                                                               *)

(* A point (rig_point): private in rig.mli, so a timeline value (an int64) is refused by the type checker
   where a point is meant, and a point where a value is. The packing is rig.h's rig_point_make. *)
module Point = struct
  type t = int64

  let none = 0L
  let value_bits = 47
  let device_index p = Int64.to_int (Int64.logand (Int64.shift_right_logical p value_bits) 0xffffL)
  let value p = Int64.logand p (Int64.pred (Int64.shift_left 1L value_bits))
  let to_string p = if p = 0L then "none" else Printf.sprintf "device#%d:%Ld" (device_index p) (value p)
  let pp fmt p = Format.pp_print_string fmt (to_string p)
end

(* Raises rig's Invalid_argument with a message of the binding's own (a check made before calling rig). *)
let invalid message = raise (Error { status = Status.Invalid_argument; name = c_status_name 1; message })

(* ---------------------------------------------------------------------------------------------------- *)
(* Raw functions                                                                                        *)

let c_version_string = fn "rig_version_string" (void @-> returning string)
let c_host = fn "rig_host" (ptr handle @-> returning int)
let c_memory_device = fn "rig_memory_device" (string @-> ptr handle @-> returning int)
let c_device_open = fn "rig_device_open" (string @-> ptr handle @-> returning int)
let c_device_release = fn "rig_device_release" (handle @-> returning int)
let c_device_submitted = fn "rig_device_submitted" (handle @-> ptr uint64_t @-> returning int)
let c_device_signaled = fn "rig_device_signaled" (handle @-> ptr uint64_t @-> returning int)
let c_device_wait = fn "rig_device_wait" (handle @-> uint64_t @-> uint64_t @-> returning int)
let c_buffer_create = fn "rig_buffer_create" (handle @-> size_t @-> int @-> ptr handle @-> returning int)
let release_fn = funptr (ptr void @-> returning void)

let c_buffer_wrap =
  fn "rig_buffer_wrap" (ptr void @-> size_t @-> int @-> release_fn @-> ptr void @-> ptr handle @-> returning int)

let c_buffer_view = fn "rig_buffer_view" (handle @-> size_t @-> size_t @-> ptr handle @-> returning int)
let c_buffer_borrow = fn "rig_buffer_borrow" (handle @-> handle @-> ptr handle @-> returning int)
let c_buffer_length = fn "rig_buffer_length" (handle @-> ptr size_t @-> returning int)
let c_buffer_release = fn "rig_buffer_release" (handle @-> returning int)
let c_buffer_read_into = fn "rig_buffer_read_into" (handle @-> size_t @-> ptr void @-> size_t @-> returning int)
let c_buffer_write_from = fn "rig_buffer_write_from" (handle @-> size_t @-> ptr void @-> size_t @-> returning int)
let access_fn = funptr (ptr void @-> ptr void @-> size_t @-> returning void)
let c_buffer_read = fn "rig_buffer_read" (handle @-> access_fn @-> ptr void @-> returning int)
let c_buffer_write = fn "rig_buffer_write" (handle @-> access_fn @-> ptr void @-> returning int)

(* rig_part, laid out as rig.h declares it (ctypes applies the C rules of alignment). *)
type part

let part : part structure typ = structure "rig_part"
let p_size = field part "size" size_t
let p_kind = field part "kind" int
let p_src_slot = field part "src_slot" uint32_t
let p_dst_slot = field part "dst_slot" uint32_t
let p_src_offset = field part "src_offset" size_t
let p_dst_offset = field part "dst_offset" size_t
let p_length = field part "length" size_t
let p_byte = field part "byte" uint8_t
let p_fn = field part "fn" (ptr void)
let p_user = field part "user" (ptr void)
let _p_module = field part "module" (ptr void)
let _p_function = field part "function" (ptr char)
let _p_grid = field part "grid" (array 3 uint32_t)
let _p_block = field part "block" (array 3 uint32_t)
let _p_shared_bytes = field part "shared_bytes" uint32_t
let _p_slots = field part "slots" (ptr uint32_t)
let _p_slot_count = field part "slot_count" uint32_t
let () = seal part

type span

let span : span structure typ = structure "rig_span"
let s_data = field span "data" (ptr void)
let s_length = field span "length" size_t
let () = seal span
let kernel_fn = ptr void @-> ptr span @-> size_t @-> returning void

let c_submission_make =
  fn "rig_submission_make" (handle @-> ptr part @-> size_t @-> ptr int @-> size_t @-> ptr handle @-> returning int)

let c_submission_release = fn "rig_submission_release" (handle @-> returning int)
let c_run_take = fn "rig_run_take" (handle @-> ptr handle @-> returning int)
let c_run_set_buffer = fn "rig_run_set_buffer" (handle @-> uint32_t @-> handle @-> returning int)
let c_submit = fn "rig_submit" (handle @-> ptr uint64_t @-> size_t @-> ptr uint64_t @-> returning int)
let c_run_release = fn "rig_run_release" (handle @-> returning int)
let c_run_set_scalars = fn "rig_run_set_scalars" (handle @-> ptr void @-> size_t @-> returning int)
let c_module_load = fn "rig_module_load" (handle @-> int @-> ptr void @-> size_t @-> ptr handle @-> returning int)
let c_module_release = fn "rig_module_release" (handle @-> returning int)
let c_buffer_export = fn "rig_buffer_export" (handle @-> ptr (ptr void) @-> returning int)
let c_device_list = fn "rig_device_list" (ptr string_opt @-> size_t @-> ptr size_t @-> returning int)
let c_device_point = fn "rig_device_point" (handle @-> uint64_t @-> ptr uint64_t @-> returning int)
let c_wait_point = fn "rig_wait_point" (uint64_t @-> uint64_t @-> returning int)
let c_device_lost_reason = fn "rig_device_lost_reason" (handle @-> ptr string_opt @-> returning int)
let c_interrupt_waits = fn "rig_interrupt_waits" (int @-> returning void)
let c_host_register = fn "rig_host_register" (handle @-> ptr void @-> size_t @-> int @-> returning int)
let c_host_unregister = fn "rig_host_unregister" (handle @-> ptr void @-> returning int)
let c_host_is_registered = fn "rig_host_is_registered" (ptr void @-> size_t @-> ptr int @-> returning int)

type device_info_s

let device_info_s : device_info_s structure typ = structure "rig_device_info"
let di_size = field device_info_s "size" size_t
let di_name = field device_info_s "name" string_opt
let di_framework = field device_info_s "framework" string_opt
let di_model = field device_info_s "model" string_opt
let di_kind = field device_info_s "kind" int
let di_index = field device_info_s "index" uint32_t
let di_memory_bytes = field device_info_s "memory_bytes" uint64_t
let di_integrated = field device_info_s "integrated" int
let di_lost = field device_info_s "lost" int
let () = seal device_info_s
let c_device_get_info = fn "rig_device_get_info" (handle @-> ptr device_info_s @-> returning int)

(* ---------------------------------------------------------------------------------------------------- *)
(* Devices                                                                                              *)

let version () = c_version_string ()

module Device = struct
  type t = owned

  let host () = own (fun _ -> ok) (out_handle c_host)
  let memory name = own c_device_release (out_handle (c_memory_device name))
  let open_ name = own c_device_release (out_handle (c_device_open name))
  let release = release

  let value f d =
    let v = allocate uint64_t Unsigned.UInt64.zero in
    check (f d.raw v);
    Unsigned.UInt64.to_int64 !@v

  let submitted d = value c_device_submitted d
  let signaled d = value c_device_signaled d

  (* The point of value v of this device. *)
  let point d v =
    let p = allocate uint64_t Unsigned.UInt64.zero in
    check (c_device_point d.raw (Unsigned.UInt64.of_int64 v) p);
    Unsigned.UInt64.to_int64 !@p

  (* Waits for point p of this device (the zero point at once); a point of another device raises
     Invalid_argument naming it (wait_point waits for any device's), a value past the submitted one
     rig's own Invalid_argument. *)
  let wait ?timeout d (p : Point.t) =
    if p <> Point.none then begin
      let first = if submitted d = 0L then Point.none else point d 1L in
      if Point.device_index first <> Point.device_index p then
        invalid
          (Printf.sprintf "point %s is not of this device (%s)" (Point.to_string p)
             (if first = Point.none then "it has none yet"
              else Printf.sprintf "its points are device#%d's" (Point.device_index first)));
      check (c_device_wait d.raw (Unsigned.UInt64.of_int64 (Point.value p)) (timeout_ns timeout))
    end

  type info = {
    name : string;
    framework : string;
    model : string;
    kind : int;
    index : int;
    memory_bytes : int64;
    integrated : int;
    lost : bool;
  }

  (* The strings are copied while the handle lives. *)
  let info d =
    let i = make device_info_s in
    setf i di_size (size (sizeof device_info_s));
    check (c_device_get_info d.raw (addr i));
    let str f = Option.value ~default:"" (getf i f) in
    {
      name = str di_name;
      framework = str di_framework;
      model = str di_model;
      kind = getf i di_kind;
      index = Unsigned.UInt32.to_int (getf i di_index);
      memory_bytes = Unsigned.UInt64.to_int64 (getf i di_memory_bytes);
      integrated = getf i di_integrated;
      lost = getf i di_lost <> 0;
    }


  (* Why the device was lost; None while it is not. *)
  let lost_reason d =
    let p = allocate string_opt None in
    check (c_device_lost_reason d.raw p);
    !@p
end

(* The names Device.open_ accepts. *)
let device_list () =
  let n = allocate size_t Unsigned.Size_t.zero in
  check (c_device_list (from_voidp string_opt null) Unsigned.Size_t.zero n);
  let count = Unsigned.Size_t.to_int !@n in
  let names = CArray.make string_opt (max count 1) in
  check (c_device_list (CArray.start names) (size count) n);
  List.filter_map (fun x -> x) (CArray.to_list (CArray.sub names ~pos:0 ~length:(min count (Unsigned.Size_t.to_int !@n))))

let wait_point ?timeout p = check (c_wait_point (Unsigned.UInt64.of_int64 p) (timeout_ns timeout))
let interrupt_waits on = c_interrupt_waits (if on then 1 else 0)

let memory_device = Device.memory

(* ---------------------------------------------------------------------------------------------------- *)
(* Buffers                                                                                              *)

(* A Bigarray over C memory rig gives a callback, valid only during it. *)
let view_of p n : host = bigarray_of_ptr array1 n Bigarray.char (from_voidp char p)

(* Bigarrays rig wraps, held until rig calls the release (keyed by their address). *)
let wrapped : (nativeint, host) Hashtbl.t = Hashtbl.create 16
let release_wrapped user = Hashtbl.remove wrapped (raw_address_of_ptr user)

module Buffer = struct
  type t = owned

  let made h = own c_buffer_release h

  let create ?(memory = 0) device length =
    made (out_handle (c_buffer_create device.raw (size length) memory))

  (* A host buffer over the Bigarray's bytes, without a copy; read_only as a read-only mapping. *)
  let of_bigarray ?(read_only = false) (ba : host) =
    let p = to_voidp (bigarray_start array1 ba) in
    Hashtbl.add wrapped (raw_address_of_ptr p) ba;
    let out = allocate handle null in
    let st = c_buffer_wrap p (size (Bigarray.Array1.dim ba)) (if read_only then 1 else 3) release_wrapped p out in
    if st <> ok then Hashtbl.remove wrapped (raw_address_of_ptr p);
    (* rig calls no release for a wrap that failed *)
    check st;
    made !@out

  let of_string s =
    let ba = Bigarray.Array1.create Bigarray.char Bigarray.c_layout (String.length s) in
    String.iteri (fun i c -> ba.{i} <- c) s;
    of_bigarray ba

  let view b ~offset ~length = made (out_handle (c_buffer_view b.raw (size offset) (size length)))

  let borrow device b = made (out_handle (c_buffer_borrow device.raw b.raw))

  let length b =
    let n = allocate size_t Unsigned.Size_t.zero in
    check (c_buffer_length b.raw n);
    Unsigned.Size_t.to_int !@n

  let release = release

  (* Bytes are copied through a Bigarray: OCaml's own bytes may move while C holds them. *)
  let read_into b ~offset (dst : host) =
    check (c_buffer_read_into b.raw (size offset) (to_voidp (bigarray_start array1 dst)) (size (Bigarray.Array1.dim dst)))

  let write_from b ~offset (src : host) =
    check (c_buffer_write_from b.raw (size offset) (to_voidp (bigarray_start array1 src)) (size (Bigarray.Array1.dim src)))

  let to_string b =
    let ba = Bigarray.Array1.create Bigarray.char Bigarray.c_layout (length b) in
    read_into b ~offset:0 ba;
    String.init (Bigarray.Array1.dim ba) (fun i -> ba.{i})

  (* The bytes as a Bigarray, ordered only as of this call (rig.h, rig_buffer_export): later reads and
     writes through it follow no work. Valid until the last buffer over the allocation is released. *)
  let export b =
    let p = allocate (ptr void) null in
    check (c_buffer_export b.raw p);
    view_of !@p (length b)

  let access c f _user p n = try f (view_of p (Unsigned.Size_t.to_int n)) with e -> keep_exn c e

  (* f sees the bytes after the last write (rule 5); the Bigarray is valid only during f. *)
  let read b f =
    let c = caught () in
    let cb = access c f in
    let st = c_buffer_read b.raw cb null in
    let (_ : unit ptr -> unit ptr -> Unsigned.size_t -> unit) = Sys.opaque_identity cb in
    check_after c st

  (* f's writes land in the buffer, after every use (rule 6). *)
  let write b f =
    let c = caught () in
    let cb = access c f in
    let st = c_buffer_write b.raw cb null in
    let (_ : unit ptr -> unit ptr -> Unsigned.size_t -> unit) = Sys.opaque_identity cb in
    check_after c st
end

(* ---------------------------------------------------------------------------------------------------- *)
(* Submissions                                                                                          *)

(* How a submission's slot uses its buffer (rig_access). *)
type access = Read | Write | Read_write

let access_int = function Read -> 1 | Write -> 2 | Read_write -> 3

module Module = struct
  type t = owned

  let ptx = 1
  let cubin = 2
  let spirv = 3
  let hip_code_object = 4

  (* Loads device code (a string of its bytes) on the device. *)
  let load device format (code : string) =
    let buf = CArray.of_string code in
    own c_module_release
      (out_handle (c_module_load device.raw format (to_voidp (CArray.start buf)) (size (String.length code))))

  let release = release
end

module Submission = struct
  type slot = int

  type part_spec =
    | Copy of { src : slot; dst : slot; src_offset : int; dst_offset : int; length : int option }
    | Fill of { dst : slot; offset : int; length : int option; byte : char }
    | Host_kernel of (host array -> unit)
        (** runs on a memory device over every slot's bytes (valid only during the call); its exception
            is raised by the submit that ran it *)
    | Launch of { modul : Module.t; fn_name : string; grid : int * int * int; block : int * int * int;
                  shared_bytes : int; launch_slots : slot list }
        (** a GPU kernel: its parameters are the device addresses of launch_slots, then the scalars *)

  let copy ?(src_offset = 0) ?(dst_offset = 0) ?length ~src ~dst () = Copy { src; dst; src_offset; dst_offset; length }
  let fill ?(offset = 0) ?length ~dst byte = Fill { dst; offset; length; byte }

  (* kernels: the closures rig calls, reachable while the submission is *)
  type t = {
    o : owned;
    kernels : (caught * (unit ptr -> span structure ptr -> Unsigned.size_t -> unit)) list;
    modules : Module.t list;
        (* never read: held so the GC does not release the modules while rig uses them *)
  }
  [@@warning "-69"]

  let len = function None -> whole | Some n -> size n

  let make device (parts : part_spec list) (access : access list) =
    let n = List.length parts in
    let arr = CArray.make part (max n 1) in
    let kernels = ref [] in
    let strings = ref [] (* launch names and slot lists: rig copies them during make *) and modules = ref [] in
    List.iteri
      (fun i spec ->
        let p = CArray.get arr i in
        setf p p_size (size (sizeof part));
        (match spec with
        | Copy c ->
            setf p p_kind 1;
            setf p p_src_slot (Unsigned.UInt32.of_int c.src);
            setf p p_dst_slot (Unsigned.UInt32.of_int c.dst);
            setf p p_src_offset (size c.src_offset);
            setf p p_dst_offset (size c.dst_offset);
            setf p p_length (len c.length)
        | Fill f ->
            setf p p_kind 2;
            setf p p_dst_slot (Unsigned.UInt32.of_int f.dst);
            setf p p_dst_offset (size f.offset);
            setf p p_length (len f.length);
            setf p p_byte (Unsigned.UInt8.of_int (Char.code f.byte))
        | Host_kernel f ->
            let c = caught () in
            let cb _user spans count =
              try
                let count = Unsigned.Size_t.to_int count in
                let views =
                  Array.init count (fun i ->
                      let s = !@(spans +@ i) in
                      view_of (getf s s_data) (Unsigned.Size_t.to_int (getf s s_length)))
                in
                f views
              with e -> keep_exn c e
            in
            kernels := (c, cb) :: !kernels;
            setf p p_kind 3;
            setf p p_fn (coerce (funptr kernel_fn) (ptr void) cb);
            setf p p_user null
        | Launch l ->
            let name = CArray.of_string l.fn_name in
            let slots = CArray.of_list uint32_t (List.map Unsigned.UInt32.of_int l.launch_slots) in
            strings := Obj.repr name :: Obj.repr slots :: !strings;
            modules := l.modul :: !modules;
            let u = Unsigned.UInt32.of_int in
            let three (x, y, z) = CArray.of_list uint32_t [ u x; u y; u z ] in
            setf p p_kind 4;
            setf p _p_module l.modul.raw;
            setf p _p_function (CArray.start name);
            setf p _p_grid (three l.grid);
            setf p _p_block (three l.block);
            setf p _p_shared_bytes (u l.shared_bytes);
            setf p _p_slots (CArray.start slots);
            setf p _p_slot_count (u (List.length l.launch_slots)));
        CArray.set arr i p)
      parts;
    let acc = CArray.of_list int (List.map access_int access) in
    let h =
      out_handle
        (c_submission_make device.raw (CArray.start arr) (size n) (CArray.start acc) (size (List.length access)))
    in
    ignore (Sys.opaque_identity !strings);
    { o = own c_submission_release h; kernels = !kernels; modules = !modules }

  let release s = release s.o
end

module Run = struct
  type t = { o : owned; sub : Submission.t (* its kernels outlive this run *) }

  let take (s : Submission.t) = { o = own c_run_release (out_handle (c_run_take s.o.raw)); sub = s }
  let set_buffer r slot (b : Buffer.t) = check (c_run_set_buffer r.o.raw (Unsigned.UInt32.of_int slot) b.raw)

  (* The scalar bytes passed to launches (copied by rig). *)
  let set_scalars r (bytes : string) =
    let buf = CArray.of_string bytes in
    check (c_run_set_scalars r.o.raw (to_voidp (CArray.start buf)) (size (String.length bytes)))

  (* Returns the run's point. A host kernel's exception is raised in place of it. *)
  let submit ?(waits = []) r =
    let w = CArray.of_list uint64_t (List.map Unsigned.UInt64.of_int64 waits) in
    let point = allocate uint64_t Unsigned.UInt64.zero in
    let st = c_submit r.o.raw (CArray.start w) (size (List.length waits)) point in
    List.iter (fun (c, _) -> reraise c) r.sub.kernels;
    check st;
    Unsigned.UInt64.to_int64 !@point

  let release r = release r.o
end

(* Makes, takes and submits in one call; slots are (buffer, access). *)
let submit device parts (slots : (Buffer.t * access) list) =
  let sub = Submission.make device parts (List.map snd slots) in
  let run = Run.take sub in
  List.iteri (fun i (b, _) -> Run.set_buffer run i b) slots;
  let point = Run.submit run in
  Run.release run;
  Submission.release sub;
  point


(* ---------------------------------------------------------------------------------------------------- *)
(* Verdicts                                                                                             *)

type refusal =
  | Integrated_gpu
  | Device_kind_unknown
  | Kernel_hazard of string
  | Not_measured of string
  | Wrong_bytes
  | Other_refusal of int  (** a refusal added after this binding *)

type verdict =
  | Usable
  | Not_needed of string
  | Refused of refusal
  | Too_slow of string
  | Inconclusive of string
  | Still_registered of string
  | Other of int  (** a kind added after this binding *)

let c_verdict_get_kind = fn "rig_verdict_get_kind" (handle @-> ptr int @-> returning int)
let c_verdict_refusal = fn "rig_verdict_refusal" (handle @-> ptr int @-> returning int)
let c_verdict_reason = fn "rig_verdict_reason" (handle @-> ptr string_opt @-> returning int)
let c_verdict_to_string = fn "rig_verdict_to_string" (handle @-> ptr string_opt @-> returning int)
let c_verdict_cacheable = fn "rig_verdict_cacheable" (handle @-> ptr int @-> returning int)
let c_verdict_release = fn "rig_verdict_release" (handle @-> returning int)

(* A verdict read whole into OCaml, with its one-line text and whether it may be cached. *)
type answer = { verdict : verdict; text : string; cacheable : bool }

let take_verdict h =
  Fun.protect
    ~finally:(fun () -> ignore (c_verdict_release h))
    (fun () ->
      let i f =
        let p = allocate int 0 in
        check (f h p);
        !@p
      in
      let s f =
        let p = allocate string_opt None in
        check (f h p);
        Option.value ~default:"" !@p
      in
      let kind = i c_verdict_get_kind and refusal = i c_verdict_refusal and reason = s c_verdict_reason in
      let verdict =
        match kind with
        | 1 -> Usable
        | 2 -> Not_needed reason
        | 3 ->
            Refused
              (match refusal with
              | 1 -> Integrated_gpu
              | 2 -> Device_kind_unknown
              | 3 -> Kernel_hazard reason
              | 4 -> Not_measured reason
              | 5 -> Wrong_bytes
              | r -> Other_refusal r)
        | 4 -> Too_slow reason
        | 5 -> Inconclusive reason
        | 6 -> Still_registered reason
        | k -> Other k
      in
      { verdict; text = s c_verdict_to_string; cacheable = i c_verdict_cacheable <> 0 })

(* The self-test's ways to talk to a device, as the spec's record. *)
type ops = {
  register : host -> unit;  (** may raise on a refusal *)
  unregister : host -> unit;
  alloc_host : int -> host;
  free_host : host -> unit;
  round_trip : host -> into:host -> unit;
  upload : host -> unit;
}

type probe_ops

let probe_ops : probe_ops structure typ = structure "rig_probe_ops"
let o_size = field probe_ops "size" size_t
let o_user = field probe_ops "user" (ptr void)
let range_op = funptr (ptr void @-> ptr void @-> size_t @-> returning int)
let o_register = field probe_ops "register_host" range_op
let o_unregister = field probe_ops "unregister_host" range_op
let o_alloc = field probe_ops "alloc_host" (funptr (ptr void @-> size_t @-> ptr (ptr void) @-> returning int))
let o_free = field probe_ops "free_host" range_op
let o_round_trip = field probe_ops "round_trip" (funptr (ptr void @-> ptr void @-> ptr void @-> size_t @-> returning int))
let o_upload = field probe_ops "upload" range_op
let o_now = field probe_ops "now_ns" (funptr_opt (ptr void @-> returning uint64_t))
let () = seal probe_ops

type probe_options

let probe_options : probe_options structure typ = structure "rig_probe_options"
let po_size = field probe_options "size" size_t
let po_min_speed = field probe_options "min_relative_speed" double
let po_log = field probe_options "log" (funptr_opt (ptr void @-> string @-> returning void))
let po_log_user = field probe_options "log_user" (ptr void)
let () = seal probe_options

let c_probe_with =
  fn "rig_probe_with"
    (ptr probe_ops @-> ptr void @-> ptr void @-> size_t @-> ptr probe_options @-> ptr handle @-> returning int)

let c_probe =
  fn "rig_probe" (handle @-> ptr void @-> ptr void @-> size_t @-> ptr probe_options @-> ptr handle @-> returning int)

let options ?log ~min_relative_speed c =
  let o = make probe_options in
  setf o po_size (size (sizeof probe_options));
  setf o po_min_speed min_relative_speed;
  let logger = Option.map (fun f _user msg -> try f msg with e -> keep_exn c e) log in
  setf o po_log logger;
  setf o po_log_user null;
  (o, logger)

(* What rig gets for an op's exception, as the spec says: Out_of_memory, Stack_overflow and Sys.Break
   are raised again by probe_with (rig returns OUT_OF_MEMORY or INTERRUPTED as the probe's own error);
   every other exception makes the verdict Inconclusive, and its text goes to the log. *)
let op_status c log name e =
  match e with
  | Out_of_memory | Stack_overflow -> keep_exn c e; out_of_memory
  | Sys.Break -> keep_exn c e; interrupted
  | Error { status; _ } when status <> Status.Out_of_memory && status <> Status.Interrupted ->
      Option.iter (fun f -> try f (name ^ " raised " ^ Printexc.to_string e) with _ -> ()) log;
      Status.to_int status
  | e ->
      Option.iter (fun f -> try f (name ^ " raised " ^ Printexc.to_string e) with _ -> ()) log;
      driver

let probe_with ?log ?(min_relative_speed = 0.0) (ops : ops) ~(map : host) ~(reference : host) =
  let c = caught () in
  let allocs : (nativeint, host) Hashtbl.t = Hashtbl.create 4 in
  let guard name f = try f (); ok with e -> op_status c log name e in
  let o = make probe_ops in
  setf o o_size (size (sizeof probe_ops));
  setf o o_user null;
  let register _ p n = guard "register" (fun () -> ops.register (view_of p (Unsigned.Size_t.to_int n))) in
  let unregister _ p n = guard "unregister" (fun () -> ops.unregister (view_of p (Unsigned.Size_t.to_int n))) in
  let alloc _ n out =
    guard "alloc_host" (fun () ->
        let n = Unsigned.Size_t.to_int n in
        let ba = ops.alloc_host n in
        if Bigarray.Array1.dim ba < n then failwith "alloc_host gave too few bytes";
        let p = to_voidp (bigarray_start array1 ba) in
        Hashtbl.replace allocs (raw_address_of_ptr p) ba;
        out <-@ p)
  in
  let free _ p _ =
    guard "free_host" (fun () ->
        let key = raw_address_of_ptr p in
        let ba = Hashtbl.find allocs key in
        Hashtbl.remove allocs key;
        ops.free_host ba)
  in
  let round_trip _ h into n =
    guard "round_trip" (fun () ->
        let n = Unsigned.Size_t.to_int n in
        ops.round_trip (view_of h n) ~into:(view_of into n))
  in
  let upload _ p n = guard "upload" (fun () -> ops.upload (view_of p (Unsigned.Size_t.to_int n))) in
  setf o o_register register;
  setf o o_unregister unregister;
  setf o o_alloc alloc;
  setf o o_free free;
  setf o o_round_trip round_trip;
  setf o o_upload upload;
  setf o o_now None;
  let opts, logger = options ?log ~min_relative_speed c in
  if Bigarray.Array1.dim map <> Bigarray.Array1.dim reference then invalid_arg "Rig.probe_with: map and reference lengths differ";
  let out = allocate handle null in
  let st =
    c_probe_with (addr o) (to_voidp (bigarray_start array1 map)) (to_voidp (bigarray_start array1 reference))
      (size (Bigarray.Array1.dim map)) (addr opts) out
  in
  ignore (Sys.opaque_identity (register, unregister, alloc, free, round_trip, upload, logger, o, opts));
  Hashtbl.iter (fun _ ba -> try ops.free_host ba with _ -> ()) allocs;
  check_after c st;
  take_verdict !@out

let probe ?log ?(min_relative_speed = 0.0) (device : Device.t) ~(map : host) ~(reference : host) =
  let c = caught () in
  let opts, logger = options ?log ~min_relative_speed c in
  if Bigarray.Array1.dim map <> Bigarray.Array1.dim reference then invalid_arg "Rig.probe: map and reference lengths differ";
  let out = allocate handle null in
  let st =
    c_probe device.raw (to_voidp (bigarray_start array1 map)) (to_voidp (bigarray_start array1 reference))
      (size (Bigarray.Array1.dim map)) (addr opts) out
  in
  ignore (Sys.opaque_identity (logger, opts));
  check_after c st;
  take_verdict !@out

let c_static_verdict = fn "rig_static_verdict" (handle @-> ptr handle @-> returning int)

(* The static verdict, or None when the self-test is required. *)
let static_verdict (device : Device.t) =
  let out = allocate handle null in
  check (c_static_verdict device.raw out);
  if is_null !@out then None else Some (take_verdict !@out)

let c_static_verdict_for =
  fn "rig_static_verdict_for" (string @-> int @-> funptr_opt (ptr void @-> int @-> returning int) @-> ptr void @-> ptr handle @-> returning int)

(* The static table for a bare framework name; facts answers its questions (1 yes, 0 no, -1 could not be
   read). None when the self-test is required. *)
let static_verdict_for ?facts framework ~kind =
  let c = caught () in
  let cb =
    Option.map
      (fun f _user fact ->
        try match f fact with (0 | 1) as a -> a | _ -> -1 with e -> keep_exn c e; -1)
      facts
  in
  let out = allocate handle null in
  let st = c_static_verdict_for framework kind cb null out in
  ignore (Sys.opaque_identity cb);
  check_after c st;
  if is_null !@out then None else Some (take_verdict !@out)

let fact_integrated = 1
let fact_pageable_uses_host_page_tables = 2
let device_gpu = 2

(* Registers the Bigarray's bytes with the device's driver through rig's range table. The Bigarray must
   stay alive and mapped until host_unregister succeeds (for good where it fails). *)
let host_register (device : Device.t) (h : host) ~access =
  check (c_host_register device.raw (to_voidp (bigarray_start array1 h)) (size (Bigarray.Array1.dim h)) (access_int access))

let host_unregister (device : Device.t) (h : host) = check (c_host_unregister device.raw (to_voidp (bigarray_start array1 h)))

let host_is_registered (h : host) =
  let r = allocate int 0 in
  check (c_host_is_registered (to_voidp (bigarray_start array1 h)) (size (Bigarray.Array1.dim h)) r);
  !@r <> 0

(* ---------------------------------------------------------------------------------------------------- *)
(* The loader (rig_load.h)                                                                              *)

module Dtype = struct
  type t =
    | U8 | I8 | Bool | F8_e4m3 | F8_e5m2 | U16 | I16 | F16 | Bf16 | U32 | I32 | F32 | U64 | I64 | F64
    | Ggml of int
    | Other of int

  (* rig_dtype's pinned values 1..15, in order *)
  let plain = [| U8; I8; Bool; F8_e4m3; F8_e5m2; U16; I16; F16; Bf16; U32; I32; F32; U64; I64; F64 |]
  let names = [| "U8"; "I8"; "BOOL"; "F8_E4M3"; "F8_E5M2"; "U16"; "I16"; "F16"; "BF16"; "U32"; "I32"; "F32";
                 "U64"; "I64"; "F64" |]

  let of_raw dtype ggml_type =
    if dtype = 16 then Ggml ggml_type else if dtype >= 1 && dtype <= 15 then plain.(dtype - 1) else Other dtype

  let to_string = function
    | Ggml n -> Printf.sprintf "GGML(%d)" n
    | Other n -> Printf.sprintf "Dtype(%d)" n
    | d ->
        let rec find i = if plain.(i) = d then names.(i) else find (i + 1) in
        find 0
end

type load_tensor_s

let load_tensor_s : load_tensor_s structure typ = structure "rig_load_tensor"
let lt_size = field load_tensor_s "size" size_t
let lt_name = field load_tensor_s "name" string_opt
let lt_dtype_name = field load_tensor_s "dtype_name" string_opt
let lt_dtype = field load_tensor_s "dtype" int
let lt_ggml_type = field load_tensor_s "ggml_type" uint32_t
let lt_rank = field load_tensor_s "rank" uint32_t
let lt_shape = field load_tensor_s "shape" (array 8 uint64_t)
let lt_offset = field load_tensor_s "offset" uint64_t
let lt_length = field load_tensor_s "length" uint64_t
let lt_shard = field load_tensor_s "shard" size_t
let () = seal load_tensor_s

type placement_s

let placement_s : placement_s structure typ = structure "rig_load_placement"
let pl_size = field placement_s "size" size_t
let pl_devices = field placement_s "devices" (ptr handle)
let pl_device_count = field placement_s "device_count" size_t
let pl_rule = field placement_s "rule" int
let _pl_masks = field placement_s "masks" (ptr uint64_t)
let () = seal placement_s

let c_load_open = fn "rig_load_open" (string @-> int @-> ptr handle @-> returning int)
let c_load_tensor_count = fn "rig_load_tensor_count" (handle @-> ptr size_t @-> returning int)
let c_load_tensor_get = fn "rig_load_tensor_get" (handle @-> size_t @-> ptr load_tensor_s @-> returning int)
let c_load_find = fn "rig_load_find" (handle @-> string @-> ptr size_t @-> returning int)
let c_load_file_release = fn "rig_load_file_release" (handle @-> returning int)
let c_load_file_format = fn "rig_load_file_format" (handle @-> ptr int @-> returning int)
let c_load_shard_count = fn "rig_load_shard_count" (handle @-> ptr size_t @-> returning int)

let c_load_shard_get =
  fn "rig_load_shard_get" (handle @-> size_t @-> ptr string_opt @-> ptr uint64_t @-> returning int)

let c_load_metadata_count = fn "rig_load_metadata_count" (handle @-> ptr size_t @-> returning int)

let c_load_metadata_get =
  fn "rig_load_metadata_get" (handle @-> size_t @-> ptr string_opt @-> ptr string_opt @-> returning int)

let c_load_start =
  fn "rig_load_start"
    (handle @-> ptr size_t @-> size_t @-> ptr placement_s @-> ptr void @-> ptr handle @-> returning int)

let c_load_buffer = fn "rig_load_buffer" (handle @-> size_t @-> size_t @-> ptr handle @-> returning int)
let c_load_wait = fn "rig_load_wait" (handle @-> returning int)
let c_load_release = fn "rig_load_release" (handle @-> returning int)

module Load = struct
  type file = owned

  type tensor = {
    name : string;
    dtype : Dtype.t;
    dtype_name : string;
    shape : int64 list;
    offset : int64;
    length : int64;
    shard : int;
  }

  type format = Safetensors | Gguf | Raw | Other of int
  type shard = { path : string; bytes : int64 }

  let open_file path = own c_load_file_release (out_handle (c_load_open path 0))
  let release_file = release

  (* A count of the file's tensors, shards or metadata entries. *)
  let count_of c f =
    let n = allocate size_t Unsigned.Size_t.zero in
    check (c f.raw n);
    Unsigned.Size_t.to_int !@n

  let count = count_of c_load_tensor_count

  (* The strings are copied while the file handle lives. *)
  let tensor f index =
    let t = make load_tensor_s in
    setf t lt_size (size (sizeof load_tensor_s));
    check (c_load_tensor_get f.raw (size index) (addr t));
    let u64 v = Unsigned.UInt64.to_int64 v in
    let rank = min 8 (Unsigned.UInt32.to_int (getf t lt_rank)) in
    {
      name = Option.value ~default:"" (getf t lt_name);
      dtype = Dtype.of_raw (getf t lt_dtype) (Unsigned.UInt32.to_int (getf t lt_ggml_type));
      dtype_name = Option.value ~default:"" (getf t lt_dtype_name);
      shape = List.init rank (fun i -> u64 (CArray.get (getf t lt_shape) i));
      offset = u64 (getf t lt_offset);
      length = u64 (getf t lt_length);
      shard = Unsigned.Size_t.to_int (getf t lt_shard);
    }

  let tensors f = List.init (count f) (tensor f)

  let format f =
    let v = allocate int 0 in
    check (c_load_file_format f.raw v);
    match !@v with 1 -> Safetensors | 2 -> Gguf | 3 -> Raw | n -> Other n

  (* The strings are copied while the file handle lives, as a tensor's. *)
  let shard f index =
    let path = allocate string_opt None and bytes = allocate uint64_t Unsigned.UInt64.zero in
    check (c_load_shard_get f.raw (size index) path bytes);
    { path = Option.value ~default:"" !@path; bytes = Unsigned.UInt64.to_int64 !@bytes }

  let shards f = List.init (count_of c_load_shard_count f) (shard f)

  let metadata_entry f index =
    let key = allocate string_opt None and value = allocate string_opt None in
    check (c_load_metadata_get f.raw (size index) key value);
    (Option.value ~default:"" !@key, Option.value ~default:"" !@value)

  let metadata f = List.init (count_of c_load_metadata_count f) (metadata_entry f)

  let find f name =
    let i = allocate size_t Unsigned.Size_t.zero in
    check (c_load_find f.raw name i);
    Unsigned.Size_t.to_int !@i

  type rule = Each | By_layer
  type t = owned

  let start ?(rule = Each) f (devices : Device.t list) =
    let ds = CArray.of_list handle (List.map (fun (d : Device.t) -> d.raw) devices) in
    let pl = make placement_s in
    setf pl pl_size (size (sizeof placement_s));
    setf pl pl_devices (CArray.start ds);
    setf pl pl_device_count (size (List.length devices));
    setf pl pl_rule (match rule with Each -> 0 | By_layer -> 1);
    let l = out_handle (c_load_start f.raw (from_voidp size_t null) (size 0) (addr pl) null) in
    ignore (Sys.opaque_identity (ds, devices));
    own c_load_release l

  let wait l = check (c_load_wait l.raw)
  let buffer l index ~device = Buffer.made (out_handle (c_load_buffer l.raw (size index) (size device)))
  let release = release
end

(* ---------------------------------------------------------------------------------------------------- *)
(* Interop (rig_interop.h): points as descriptors, device pointers as buffers                           *)

let c_interop_supported = fn "rig_interop_supported" (handle @-> handle @-> int @-> ptr int @-> returning int)
let c_point_fd = fn "rig_point_fd" (uint64_t @-> ptr int @-> returning int)
let c_point_export_sync_fd = fn "rig_point_export_sync_fd" (uint64_t @-> ptr int @-> returning int)
let c_point_import_sync_fd = fn "rig_point_import_sync_fd" (handle @-> int @-> ptr uint64_t @-> returning int)

let c_point_export_semaphore_fd =
  fn "rig_point_export_semaphore_fd" (uint64_t @-> ptr int @-> ptr uint64_t @-> returning int)

let c_point_import_semaphore_fd =
  fn "rig_point_import_semaphore_fd" (handle @-> int @-> uint64_t @-> ptr uint64_t @-> returning int)

let c_buffer_wrap_device =
  fn "rig_buffer_wrap_device" (handle @-> uint64_t @-> size_t @-> release_fn @-> ptr void @-> ptr handle @-> returning int)

let c_buffer_device_address = fn "rig_buffer_device_address" (handle @-> ptr uint64_t @-> returning int)
let c_buffer_last_write = fn "rig_buffer_last_write" (handle @-> ptr uint64_t @-> returning int)

(* Release functions of device wraps, held until rig calls them (keyed by a number rig carries as user). *)
let wrap_releases : (nativeint, unit -> unit) Hashtbl.t = Hashtbl.create 16
let next_wrap = ref 0n

module Interop = struct
  type kind = Device_pointer | Host_fd | Semaphore_fd | Sync_fd

  let supported (d : Device.t) kind =
    let k = match kind with Device_pointer -> 5 | Host_fd -> 6 | Semaphore_fd -> 11 | Sync_fd -> 12 in
    let r = allocate int 0 in
    check (c_interop_supported d.raw null k r);
    !@r <> 0

  (* On Unix a file_descr is the descriptor's int (Unix's own representation). *)
  let fd_of_int (n : int) : Unix.file_descr = Obj.magic n
  let int_of_fd (fd : Unix.file_descr) : int = Obj.magic fd
  let u64 = Unsigned.UInt64.of_int64

  let out_int f =
    let r = allocate int (-1) in
    check (f r);
    !@r

  let out_point f =
    let p = allocate uint64_t Unsigned.UInt64.zero in
    check (f p);
    Unsigned.UInt64.to_int64 !@p

  let point_fd (p : Point.t) = fd_of_int (out_int (c_point_fd (u64 p)))

  let export_sync_fd (p : Point.t) =
    let fd = out_int (c_point_export_sync_fd (u64 p)) in
    if fd < 0 then None else Some (fd_of_int fd)

  let import_sync_fd (d : Device.t) fd =
    out_point (c_point_import_sync_fd d.raw (match fd with None -> -1 | Some fd -> int_of_fd fd))

  let export_semaphore_fd (p : Point.t) =
    let v = allocate uint64_t Unsigned.UInt64.zero in
    let fd = out_int (fun r -> c_point_export_semaphore_fd (u64 p) r v) in
    (fd_of_int fd, Unsigned.UInt64.to_int64 !@v)

  let import_semaphore_fd (d : Device.t) fd value =
    out_point (c_point_import_semaphore_fd d.raw (int_of_fd fd) (u64 value))

  (* rig calls the release once the last buffer over the memory is released and every use reached; an
     exception in it is dropped (no rig call is there to raise it from). *)
  let run_release user =
    let key = raw_address_of_ptr user in
    match Hashtbl.find_opt wrap_releases key with
    | Some f -> Hashtbl.remove wrap_releases key; (try f () with _ -> ())
    | None -> ()

  let wrap_device ?(release = fun () -> ()) (d : Device.t) ~address ~length =
    next_wrap := Nativeint.succ !next_wrap;
    let key = !next_wrap in
    Hashtbl.add wrap_releases key release;
    let out = allocate handle null in
    let st = c_buffer_wrap_device d.raw (u64 address) (size length) run_release (ptr_of_raw_address key) out in
    if st <> ok then Hashtbl.remove wrap_releases key;
    (* rig calls no release for a wrap that failed *)
    check st;
    Buffer.made !@out

  let device_address (b : Buffer.t) =
    let a = allocate uint64_t Unsigned.UInt64.zero in
    check (c_buffer_device_address b.raw a);
    Unsigned.UInt64.to_int64 !@a

  let last_write (b : Buffer.t) = out_point (c_buffer_last_write b.raw)
end
