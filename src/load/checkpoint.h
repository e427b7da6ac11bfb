// Which files make a checkpoint, and their tensor tables made one: a safetensors file, a sharded
// safetensors checkpoint (its *.index.json, or the directory holding it: load/index.h), a GGUF file, or
// the first of a split GGUF set (name-00001-of-00003.gguf, whose split.* keys name the others).
#pragma once

#include <rig_load.h>

#include <memory>

#include "load/file.h"

namespace rig::load {

// Opens `path` as a checkpoint (open_file's work: rig_load_open). Every shard is opened and its header
// read; the tables are checked against each other and the index: a shard missing (RIG_NOT_FOUND), a
// tensor in two shards, an index naming a tensor its shard does not hold or a shard holding one the index
// does not name, a split GGUF set out of order (RIG_INVALID_ARGUMENT): each naming the file. Waits for
// the reads; holds no lock. Sets rig's message on failure.
rig_status open_checkpoint(const char *path, rig_load_format format, std::shared_ptr<File> *out);

}  // namespace rig::load
