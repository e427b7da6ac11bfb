(* The OCaml binding's test (`dune test`; meson: binding-ocaml): the seed's hello-world ordering program,
   rig's errors as Rig.Error with a Status.t and rig's message, waits that time out, zero-copy buffers
   over Bigarrays, callbacks written in OCaml, and probe_with over OCaml ops. *)

open Rig

let failures = ref 0
let passes = ref 0

let check cond what =
  print_endline ((if cond then "ok   " else "FAIL ") ^ what);
  if cond then incr passes else incr failures

let expect_error f status what =
  match f () with
  | _ -> check false (what ^ " raises Rig.Error")
  | exception Error e ->
      check (e.status = status && e.message <> "")
        (Printf.sprintf "%s raises %s with rig's message (got %s: %S)" what (Status.name status) e.name e.message)

let copy src dst = Submission.copy ~src ~dst ()

let hello_world () =
  (* the seed's program: two memory devices stand for two GPUs; no point is named *)
  let a = memory_device "A" and b = memory_device "B" in
  let src = Buffer.of_string "hello, world" in
  let x = Buffer.create a 12 and y = Buffer.create b 12 in
  ignore (submit a [ copy 0 1 ] [ (Buffer.borrow a src, Read); (x, Write) ]);
  ignore (submit b [ copy 0 1 ] [ (Buffer.borrow b x, Read); (y, Write) ]);
  let out = Buffer.to_string y in
  print_endline out;
  check (out = "hello, world") "hello world: y holds the bytes after two copies across devices";
  check (Device.submitted a = 1L && Device.submitted b = 1L) "each device took one value";
  a

let errors a =
  let x = Buffer.create a 12 in
  expect_error (fun () -> Buffer.view x ~offset:8 ~length:8) Status.Invalid_argument "an out-of-range view";
  Buffer.release x;
  expect_error (fun () -> Buffer.length x) Status.Invalid_handle "a released buffer";
  expect_error (fun () -> memory_device "") Status.Invalid_argument "an empty device name"

exception Boom

let callbacks a =
  let buf = Buffer.create a 8 in
  Buffer.write buf (fun ba -> String.iteri (fun i c -> ba.{i} <- c) "ABCDEFGH");
  let seen = ref "" in
  Buffer.read buf (fun ba -> seen := String.init (Bigarray.Array1.dim ba) (fun i -> ba.{i}));
  check (!seen = "ABCDEFGH") "read/write callbacks see the buffer's bytes";
  (match Buffer.read buf (fun _ -> raise Boom) with
  | () -> check false "an exception in a read callback propagates"
  | exception Boom -> check true "an exception in a read callback propagates");
  let src = Buffer.of_string "abcdefgh" and dst = Buffer.create a 8 in
  let upper =
    Submission.Host_kernel
      (fun slots ->
        for i = 0 to Bigarray.Array1.dim slots.(0) - 1 do
          slots.(1).{i} <- Char.uppercase_ascii slots.(0).{i}
        done)
  in
  ignore (submit a [ upper ] [ (Buffer.borrow a src, Read); (dst, Write) ]);
  check (Buffer.to_string dst = "ABCDEFGH") "a host kernel written in OCaml runs on a memory device";
  match submit a [ Submission.Host_kernel (fun _ -> raise Boom) ] [ (dst, Write) ] with
  | _ -> check false "a host kernel's exception is raised by submit"
  | exception Boom -> check true "a host kernel's exception is raised by submit"

let bigarray n = Bigarray.Array1.create Bigarray.char Bigarray.c_layout n

(* A device double whose round trip returns one wrong byte. *)
let double ~wrong =
  let registered = ref 0 in
  ( {
      register = (fun _ -> incr registered);
      unregister = (fun _ -> decr registered);
      alloc_host = bigarray;
      free_host = ignore;
      round_trip =
        (fun host ~into ->
          Bigarray.Array1.blit host into;
          if wrong then into.{0} <- Char.chr (Char.code into.{0} lxor 0xff));
      upload = ignore;
    },
    registered )

let probes () =
  let length = 256 * 1024 in
  (* a real file's mapping and an independent read of it, as the probe's contract asks *)
  let path = Filename.temp_file "rig-probe" ".bin" in
  let bytes = Bytes.init length (fun _ -> Char.chr (Random.int 256)) in
  let oc = open_out_bin path in
  output_bytes oc bytes;
  close_out oc;
  let fd = Unix.openfile path [ Unix.O_RDONLY ] 0 in
  let map = Bigarray.array1_of_genarray (Unix.map_file fd Bigarray.char Bigarray.c_layout false [| length |]) in
  let reference = bigarray length in
  Bytes.iteri (fun i c -> reference.{i} <- c) bytes;
  let ops, registered = double ~wrong:true in
  let lines = ref [] in
  let v = probe_with ~log:(fun l -> lines := l :: !lines) ops ~map ~reference in
  print_endline ("verdict: " ^ v.text);
  check (v.verdict = Refused Wrong_bytes) "probe_with over OCaml ops: a wrong-bytes double is Refused Wrong_bytes";
  check v.cacheable "Refused Wrong_bytes is cacheable";
  check (!registered = 0) "the probe released what it registered";
  let ops, _ = double ~wrong:false in
  let v = probe_with ops ~map ~reference in
  check (match v.verdict with Refused _ -> false | _ -> true) ("faithful ops are not refused: " ^ v.text);
  let lines = ref [] in
  let v = probe_with ~log:(fun l -> lines := l :: !lines) { ops with register = (fun _ -> failwith "driver said no") } ~map ~reference in
  check (match v.verdict with Inconclusive _ -> true | _ -> false) ("an op that raises: Inconclusive: " ^ v.text);
  check (List.exists (fun l -> try ignore (Str.search_forward (Str.regexp_string "driver said no") l 0); true with Not_found -> false) !lines)
    "the op's exception text reaches the log";
  (match probe_with { ops with alloc_host = (fun _ -> raise Out_of_memory) } ~map ~reference with
  | _ -> check false "Out_of_memory in an op is raised by probe_with"
  | exception Out_of_memory -> check true "Out_of_memory in an op is raised by probe_with");
  Unix.close fd;
  Sys.remove path

let rest () =
  Printf.printf "devices rig can open here: [%s]\n" (String.concat "; " (device_list ()));
  let asked = ref 0 in
  (match static_verdict_for "CUDA" ~kind:device_gpu ~facts:(fun f -> incr asked; if f = fact_integrated then 1 else 0) with
  | Some { verdict = Refused Integrated_gpu; _ } -> check (!asked > 0) "the static table asks its facts of OCaml"
  | _ -> check false "an integrated CUDA device is refused");
  check (match static_verdict_for "Vulkan" ~kind:device_gpu with Some { verdict = Refused (Kernel_hazard _); _ } -> true | _ -> false)
    "Vulkan is refused statically";
  let a = memory_device "A" in
  check ((Device.info a).name = "A") "device info names the device";
  let x = Buffer.create a 4 in
  ignore (submit a [ Submission.fill ~dst:0 'z' ] [ (x, Write) ]);
  check (Buffer.to_string x = "zzzz") "a fill part";
  wait_point (Device.point a 1L);
  (match Module.load a Module.ptx "// no code" with
  | _ -> check false "a memory device loads no module"
  | exception Error { status; message; _ } -> check (status = Status.Unsupported) ("a memory device loads no module: " ^ message));
  (* librig exports no hook to lose a device (rig_testing.h is for rig's own tests): a live one has no reason. *)
  check (Device.lost_reason a = None) "a live device has no lost reason"

(* A wait that times out needs work that stays unreached for a while: a copy on the CUDA double (a fake
   libcuda, RIG_CUDA_LIBRARY, whose stream sleeps FAKECUDA_COPY_DELAY_US before a copy; meson's
   binding-ocaml sets both). Memory devices run their work inline, so no wait on one can time out. *)
let timeouts () =
  let v = memory_device "V" in
  let pv = submit v [ Submission.fill ~dst:0 'v' ] [ (Buffer.create v 4, Write) ] in
  expect_error (fun () -> Device.wait ~timeout:0.0 (memory_device "W") pv) Status.Invalid_argument
    "a wait for another device's point";
  match (Sys.getenv_opt "RIG_CUDA_LIBRARY", Sys.getenv_opt "FAKECUDA_COPY_DELAY_US") with
  | None, _ | _, None -> print_endline "SKIP timeouts: no CUDA double with a copy delay (RIG_CUDA_LIBRARY, FAKECUDA_COPY_DELAY_US)"
  | Some _, Some _ ->
      let d = Device.open_ "cuda:0" in
      let x = Buffer.create d 4096 and y = Buffer.create d 4096 in
      let p = submit d [ copy 0 1 ] [ (x, Read); (y, Write) ] in
      let start = Unix.gettimeofday () in
      expect_error (fun () -> Device.wait ~timeout:0.02 d p) Status.Timeout "a held copy, waited 0.02 s";
      check (Unix.gettimeofday () -. start >= 0.02) "the wait lasted its timeout";
      expect_error (fun () -> wait_point ~timeout:0.0 p) Status.Timeout "a held point, only checked";
      wait_point p;
      check (Device.signaled d = 1L) "the copy's value is reached once waited for"

(* Zero copy: a buffer over a Bigarray is those bytes: work on it lands in the Bigarray itself. *)
let zero_copy a =
  let ba = Bigarray.Array1.create Bigarray.char Bigarray.c_layout 8 in
  Bigarray.Array1.fill ba '.';
  let w = Buffer.of_bigarray ba in
  ignore (submit a [ Submission.fill ~dst:0 'q' ] [ (Buffer.borrow a w, Write) ]);
  Buffer.read w ignore;
  check (String.init 8 (fun i -> ba.{i}) = "qqqqqqqq") "a fill through a wrap lands in the Bigarray itself";
  check ((Buffer.export w).{0} = 'q') "export sees the bytes in place";
  check (Status.of_int 7 = Status.Timeout && Status.name Status.Timeout = "RIG_TIMEOUT") "statuses are rig.h's"

let () =
  rest ();
  timeouts ();
  let a = hello_world () in
  errors a;
  callbacks a;
  zero_copy a;
  probes ();
  Gc.full_major ();
  Printf.printf "binding-ocaml: %d passed, %d failed\n" !passes !failures;
  exit (if !failures = 0 then 0 else 1)
