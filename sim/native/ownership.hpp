// The record of the SysV semaphore arrays semsim created, so that it removes only
// arrays it can prove are its own: a key alone proves nothing (any program may pick a
// key whose top byte is 'S', ftok(path, 'S') does), so cleanup never goes by keys.
//
// Where: one file per process that creates arrays, <dir>/<pid>-<starttime>.arrays,
// dir = $XDG_RUNTIME_DIR/semsim when XDG_RUNTIME_DIR is an absolute directory, else
// /tmp/semsim-<uid>. The directory must be a real directory (not a symlink) owned by
// us with no group/other access; it is created 0700 if missing and refused otherwise.
// The file is mapped MAP_SHARED: a record is a few stores into the page cache, so it
// survives a SIGKILL of its writer, costs no system call (aim9-shm creates an array per
// operation), and forked task processes, which inherit the mapping, record their own
// arrays in their parent's file (async-signal-safe: no allocation, no lock).
//
// A record: semid, key, creating pid and that process's start time (so a reused pid is
// not mistaken for the creator), and the array's sem_ctime from IPC_STAT (0 where not
// taken: then the file's creation time stands in). An array is removed by
// cleanup_recorded() only when (a) its creator is gone (no such process, a different
// process under that pid, or a zombie), and (b) IPC_STAT of the recorded id shows the
// recorded key, our uid as creator, and a sem_ctime no earlier than the recorded one.
// Anything else is left alone, and a record whose array is gone is dropped.
//
// The window between semget() returning and the record being stored is a few
// instructions; a SIGKILL inside it leaves an unrecorded array that cleanup will not
// touch (a leak, never a removal of someone else's array).
#pragma once

#include <sys/types.h>

#include <string>

namespace semsim::native {

// The per-user directory of the records; throws HostError when it cannot be made safe.
std::string ownership_dir();

// Opens (once per process) this process's record file. Must run before forking task
// processes that create arrays. Throws HostError when the directory or file cannot be
// made safe or written.
void open_ownership_record();

// Records array `id` (key `key`) as created by the calling process, now. Returns false
// when no record is open or it is full. Async-signal-safe once the record is open.
bool record_array(int id, key_t key);

// Stores the array's current sem_ctime (IPC_STAT) in its record.
void stamp_array(int id);

// Drops the record of `id` (after the array was removed). Async-signal-safe.
void forget_array(int id);

// Removes every recorded array whose creator is gone, after IPC_STAT proves it is the
// recorded one (see above); drops stale records and the files of processes that are
// gone. Returns how many arrays it removed.
int cleanup_recorded();

}  // namespace semsim::native
