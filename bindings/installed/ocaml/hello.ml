(* A program using the installed findlib package rig (OCAMLPATH at the prefix), run with no
   LD_LIBRARY_PATH. Prints "hello, world", copied by rig and then loaded back by rig's loader from a
   safetensors file the program writes. *)

(* Writes text as the one U8 tensor of a safetensors file, loads it onto d: the tensor and its bytes. *)
let load_back d text =
  let n = String.length text in
  let header = Printf.sprintf "{\"text\":{\"dtype\":\"U8\",\"shape\":[%d],\"data_offsets\":[0,%d]}}" n n in
  let path = Filename.temp_file "rig-hello" ".safetensors" in
  let oc = open_out_bin path in
  let len = Bytes.create 8 in
  Bytes.set_int64_le len 0 (Int64.of_int (String.length header));
  output_bytes oc len;
  output_string oc header;
  output_string oc text;
  close_out oc;
  let file = Rig.Load.open_file path in
  let t = Rig.Load.tensor file 0 in
  let load = Rig.Load.start file [ d ] in
  Rig.Load.wait load;
  let bytes = Rig.Buffer.to_string (Rig.Load.buffer load 0 ~device:0) in
  Rig.Load.release load;
  Rig.Load.release_file file;
  Sys.remove path;
  (t, bytes)

let () =
  let a = Rig.memory_device "A" in
  let src = Rig.Buffer.of_string "hello, world" in
  let x = Rig.Buffer.create a 12 in
  let p = Rig.submit a [ Rig.Submission.copy ~src:0 ~dst:1 () ] [ (Rig.Buffer.borrow a src, Rig.Read); (x, Rig.Write) ] in
  Rig.wait_point ~timeout:1.0 p;
  let (t : Rig.Load.tensor), loaded = load_back a (Rig.Buffer.to_string x) in
  Printf.printf "%s (rig %s, OCaml; loaded as %s [%s])\n" loaded (Rig.version ()) (Rig.Dtype.to_string t.dtype)
    (String.concat "; " (List.map Int64.to_string t.shape))
