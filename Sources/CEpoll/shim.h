#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H
// Swift's Glibc module leaves out the Linux-only readiness APIs; the event loop needs them.
// On other platforms this header is intentionally empty and the server uses poll(2).
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
#endif
