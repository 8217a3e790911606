#pragma once
// Tells whether the client of the request being served has gone away, so its
// request can be aborted (and its KV freed) at once rather than at the next failed
// write. cpp-httplib does not hand the socket to handlers, so the socket is found
// among the process's descriptors by its address pair, which is unique while the
// connection is open (and it stays open while its handler runs).
#include <string>

namespace seer::server {

class ConnectionWatch {
 public:
  // Addresses as httplib reports them (Request::local_addr/port, remote_addr/port).
  ConnectionWatch(const std::string& local_addr, int local_port, const std::string& remote_addr, int remote_port);

  // True when the peer has closed or reset the connection. Never blocks. Always
  // false when the socket could not be identified.
  bool peer_closed() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The descriptor of the connected socket with these endpoints, or -1.
int find_socket_fd(const std::string& local_addr, int local_port, const std::string& remote_addr, int remote_port);

}  // namespace seer::server
