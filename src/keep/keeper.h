// The keeper: a socket that serves a checkpoint's versions (keep/version.h) to the processes that attach.
// One thread accepts and checks each peer's credentials; each connection is served by a thread of its
// own, so a slow, silent or hostile client holds only its own thread.
#pragma once

#include <rig_keep.h>

#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <sys/un.h>
#include <thread>
#include <vector>

#include "core/device.h"
#include "keep/channel.h"
#include "keep/version.h"

namespace rig::keep {

class Keeper {
 public:
  // Loads `checkpoint` onto `devices` (the first version) and listens at `socket_path` (rig_keep_start's
  // contract). `options` is whole (the C face serves an older caller's size).
  static rig_status start(const std::string &checkpoint, std::vector<Device *> devices, const std::string &socket_path,
                          const rig_keep_options &options, std::unique_ptr<Keeper> *out);
  ~Keeper();  // stop(0) where stop was not called
  // rig_keep_stop's contract, without the handle.
  rig_status stop(uint64_t timeout_ns);
  rig_status wait_loaded();
  // rig_keep_reload's contract.
  rig_status reload();
  size_t clients();

 private:
  struct Client {
    Fd socket;
    std::thread thread;
    bool done = false;  // guarded by the keeper's mutex_
    std::string who;    // "pid P uid U" for the log
  };
  Keeper() = default;
  void log(const char *format, ...) __attribute__((format(printf, 2, 3)));
  void accept_loop();
  // Whether the peer on `socket` may attach: SO_PEERCRED against the options' uid and gid.
  bool allowed(int socket, std::string *who, std::string *why);
  void serve(Client &client);
  // One request of a connection: answers it; false where the connection must close.
  bool answer(Client &client, const Received &m, std::shared_ptr<Version> &held);
  void reap_done();
  // Binds, gives the mode to and listens on the socket, which appears at `socket_path` only then.
  rig_status listen_at(const std::string &socket_path, const sockaddr_un &final_addr);

  rig_keep_options options_{};
  std::string path_, checkpoint_;
  Publishing how_;
  std::mutex reload_mutex_;  // one reload at a time; held while the next generation starts, never by a wait
  uint64_t generation_ = 1;  // guarded by reload_mutex_
  std::vector<Device *> devices_;
  Fd listener_;
  Fd wake_;  // an eventfd the accept loop polls beside the socket: written to stop it
  std::thread acceptor_;
  std::mutex log_mutex_;

  std::mutex mutex_;  // guards current_, clients_, live_, stopping_
  std::condition_variable cv_;
  std::shared_ptr<Version> current_;
  std::list<Client> clients_;
  size_t live_ = 0;
  bool stopping_ = false;
  bool stopped_ = false;
};

}  // namespace rig::keep
