// A detached thread on a small stack (helper/run/small-thread.h).
#define _GNU_SOURCE
#include "small-thread.h"

#include <pthread.h>

int small_thread(void *(*fn)(void *), void *arg) {
  pthread_attr_t a;
  pthread_t thread;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, SMALL_THREAD_STACK);
  int ok = pthread_create(&thread, &a, fn, arg) == 0;
  pthread_attr_destroy(&a);
  return ok;
}
