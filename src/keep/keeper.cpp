#include "keep/keeper.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/error.h"

namespace rig::keep {
namespace {

constexpr size_t kDefaultMaxClients = 64;

rig_status socket_address(const std::string &path, sockaddr_un *out) {
  *out = {};
  out->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof out->sun_path)
    return fail(RIG_INVALID_ARGUMENT, "the socket path has %zu bytes (1..%zu)", path.size(), sizeof out->sun_path - 1);
  std::memcpy(out->sun_path, path.c_str(), path.size() + 1);
  return RIG_OK;
}

}  // namespace

rig_status Keeper::start(const std::string &checkpoint, std::vector<Device *> devices, const std::string &socket_path,
                         const rig_keep_options &options, std::unique_ptr<Keeper> *out) {
  std::unique_ptr<Keeper> k(new Keeper);
  k->options_ = options;
  if (!k->options_.socket_mode) k->options_.socket_mode = 0600;
  if (!k->options_.max_clients) k->options_.max_clients = kDefaultMaxClients;
  if (!k->options_.has_uid) k->options_.uid = uint32_t(::geteuid());
  k->devices_ = devices;
  sockaddr_un addr;
  if (rig_status s = socket_address(socket_path, &addr)) return fail(s, "keep_start: %s", last_error());
  k->checkpoint_ = checkpoint;
  k->how_ = {options.writable != 0, options.before_publish, options.user,
             [raw = k.get()](const std::string &line) { raw->log("%s", line.c_str()); }};
  if (rig_status s = Version::start(checkpoint, devices, 1, k->how_, &k->current_)) return s;
  k->listener_ = Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  k->wake_ = Fd(::eventfd(0, EFD_CLOEXEC));
  if (!k->listener_ || !k->wake_) return fail(RIG_DRIVER, "keep_start: socket: %s", std::strerror(errno));
  if (rig_status s = k->listen_at(socket_path, addr)) return s;
  k->log("listening on %s (mode %o), %zu tensors", socket_path.c_str(), k->options_.socket_mode & 0777,
         k->current_->table().tensors.size());
  k->acceptor_ = std::thread([raw = k.get()] { raw->accept_loop(); });
  *out = std::move(k);
  return RIG_OK;
}

// The socket appears at its path only once it listens: a peer that sees the path (a script waiting for it,
// `rig keep`'s users) never meets a refused connect. So it is bound at a name of this process's own beside
// the path, given its mode, made to listen, and only then linked at the path: link, unlike rename, refuses
// a path that exists, so another keeper's socket is never replaced. A path so long that no private name
// beside it fits is bound in place, with the short window that leaves.
rig_status Keeper::listen_at(const std::string &socket_path, const sockaddr_un &final_addr) {
  static std::atomic<unsigned> keepers{0};  // two keepers of one process starting at one path stage apart
  std::string own = socket_path + "." + std::to_string(::getpid()) + "." + std::to_string(keepers++);
  sockaddr_un addr;
  bool staged = socket_address(own, &addr) == RIG_OK;
  if (!staged) addr = final_addr, own = socket_path;
  if (staged) ::unlink(own.c_str());  // a name of this pid's, left only by a crashed keeper of a pid before
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
    int e = errno;
    return fail(e == EADDRINUSE ? RIG_BUSY : RIG_INVALID_ARGUMENT, "keep_start: binding %s: %s%s",
                socket_path.c_str(), std::strerror(e),
                e == EADDRINUSE ? " (remove it if no keeper listens there)" : "");
  }
  // The mode is set before listen: until then a connect is refused, so no peer ever meets a wider mode.
  if (::chmod(own.c_str(), options_.socket_mode & 0777) != 0 || ::listen(listener_.get(), 64) != 0 ||
      (staged && ::link(own.c_str(), socket_path.c_str()) != 0)) {
    int e = errno;
    ::unlink(own.c_str());
    return fail(e == EEXIST ? RIG_BUSY : RIG_DRIVER, "keep_start: %s: %s%s", socket_path.c_str(), std::strerror(e),
                e == EEXIST ? " (remove it if no keeper listens there)" : "");
  }
  if (staged) ::unlink(own.c_str());
  path_ = socket_path;
  return RIG_OK;
}

Keeper::~Keeper() {
  if (!stopped_) stop(0);
}

void Keeper::log(const char *format, ...) {
  if (!options_.log) return;
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(log_mutex_);
  options_.log(options_.user, line);
}

bool Keeper::allowed(int socket, std::string *who, std::string *why) {
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    *why = std::string("the peer's credentials: ") + std::strerror(errno);
    return false;
  }
  *who = "pid " + std::to_string(peer.pid) + " uid " + std::to_string(peer.uid);
  if (peer.uid == options_.uid || (options_.has_gid && peer.gid == options_.gid)) return true;
  *why = "refused: uid " + std::to_string(peer.uid) + " gid " + std::to_string(peer.gid) +
         " may not attach (this keeper serves uid " + std::to_string(options_.uid) +
         (options_.has_gid ? " and gid " + std::to_string(options_.gid) : std::string()) + ")";
  return false;
}

void Keeper::reap_done() {
  std::list<Client> done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      auto next = std::next(it);
      if (it->done) done.splice(done.end(), clients_, it);
      it = next;
    }
  }
  for (Client &c : done) c.thread.join();
}

void Keeper::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    reap_done();
    if (!(fds[0].revents & POLLIN)) continue;
    Fd s(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!s) continue;
    std::string who, why;
    if (!allowed(s.get(), &who, &why)) {
      log("%s (%s)", why.c_str(), who.c_str());
      send_message(s.get(), Type::error, encode_error(RIG_UNSUPPORTED, why));
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_ >= options_.max_clients) {
      why = "busy: the keeper serves " + std::to_string(live_) + " clients, its most";
      log("%s: %s", who.c_str(), why.c_str());
      send_message(s.get(), Type::error, encode_error(RIG_BUSY, why));
      continue;
    }
    Client &c = clients_.emplace_back();
    c.socket = std::move(s);
    c.who = who;
    ++live_;
    c.thread = std::thread([this, &c] { serve(c); });
  }
}

bool Keeper::answer(Client &client, const Received &m, std::shared_ptr<Version> &held) {
  int sock = client.socket.get();
  if (!held) {
    std::lock_guard<std::mutex> lock(mutex_);
    held = current_;
  }
  const Table &table = held->table();
  Request q;
  std::string why;
  if (rig_status s = parse_request(m.header, m.body.data(), m.body.size(), table.tensors.size(), table.devices.size(),
                                   &q, &why)) {
    // The header was whole, so the connection is still in step: answer and go on.
    return send_message(sock, Type::error, encode_error(s, why)) == RIG_OK;
  }
  switch (q.type) {
    case Type::list:
      return send_message(sock, Type::table, encode_table(table)) == RIG_OK;
    case Type::attach: {
      size_t n = q.all ? table.tensors.size() : q.tensors.size();
      for (size_t k = 0; k < n; ++k) {
        size_t index = q.all ? k : q.tensors[k];
        TensorReply reply;
        int fd = -1;
        if (rig_status s = held->published(index, q.device, &reply, &fd))
          return send_message(sock, Type::error, encode_error(s, last_error())) == RIG_OK;
        if (send_message(sock, Type::tensor, encode_tensor(reply), fd) != RIG_OK) return false;
      }
      return true;
    }
    case Type::detach:
      held.reset();
      return true;
    default:  // bye
      return false;
  }
}

void Keeper::serve(Client &client) {
  log("%s attached", client.who.c_str());
  std::shared_ptr<Version> held;
  for (;;) {
    Received m;
    std::string why;
    rig_status s = receive_message(client.socket.get(), kMaxRequestBody, &m, &why);
    if (s == RIG_LOST) break;
    if (s != RIG_OK) {
      // A bad header leaves the stream out of step: say why, then close this connection only.
      log("%s: %s", client.who.c_str(), why.c_str());
      send_message(client.socket.get(), Type::error, encode_error(s, why));
      break;
    }
    if (!answer(client, m, held)) break;
  }
  held.reset();
  log("%s gone", client.who.c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  client.socket = Fd();  // closed now, not at the reaping: the peer sees its end at once
  client.done = true;
  --live_;
  cv_.notify_all();
}

size_t Keeper::clients() {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

rig_status Keeper::wait_loaded() {
  std::shared_ptr<Version> v;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    v = current_;
  }
  return v->wait_all();
}

rig_status Keeper::reload() {
  std::unique_lock<std::mutex> one(reload_mutex_, std::try_to_lock);
  if (!one.owns_lock()) return fail(RIG_BUSY, "keep_reload: another reload of this keeper is starting");
  std::shared_ptr<Version> next;
  if (rig_status s = Version::start(checkpoint_, devices_, generation_ + 1, how_, &next)) return s;
  ++generation_;
  std::shared_ptr<Version> previous;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    previous = std::move(current_);
    current_ = std::move(next);
  }
  log("generation %llu loading; generation %llu stays with the connections that hold it",
      static_cast<unsigned long long>(generation_), static_cast<unsigned long long>(generation_ - 1));
  return RIG_OK;  // `previous` goes here unless a connection holds it
}

rig_status Keeper::stop(uint64_t timeout_ns) {
  stopped_ = true;
  uint64_t one = 1;
  if (::write(wake_.get(), &one, sizeof one) < 0) {}  // an eventfd write of 1 cannot fail short of overflow
  if (acceptor_.joinable()) acceptor_.join();
  ::unlink(path_.c_str());
  listener_ = Fd();
  bool cut = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    auto left = [&] { return live_ == 0; };
    if (timeout_ns == UINT64_MAX) {
      cv_.wait(lock, left);
    } else if (!cv_.wait_for(lock, std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX)), left)) {
      cut = true;
      // A shut-down socket wakes its thread from any receive or send: each then ends on its own.
      for (Client &c : clients_)
        if (!c.done) ::shutdown(c.socket.get(), SHUT_RDWR);
      if (current_) current_->cancel();  // and a thread waiting for a tensor stops waiting
    }
  }
  for (Client &c : clients_) c.thread.join();
  clients_.clear();
  current_.reset();
  log("stopped%s", cut ? " (clients cut off)" : "");
  if (cut) return fail(RIG_TIMEOUT, "keep_stop: clients still attached after the timeout were cut off");
  return RIG_OK;
}

}  // namespace rig::keep
