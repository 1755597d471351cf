/*
 * lab-nokeys: runs a program with the kernel's key system calls (add_key, request_key, keyctl)
 * answered ENOSYS, as on a kernel built without keys, and every system call of another ABI
 * refused the same way (on x86-64 a 64-bit process can make 32-bit and x32 calls, whose
 * numbers differ from the ones checked here).
 *
 *   lab-nokeys PROGRAM [ARGS...]      (PROGRAM is a path: execv, no PATH search)
 *
 * Why: a kernel key outlives the process that made it (a user's keyrings stay until reboot),
 * and one whose permissions give "other" view and read is listed in /proc/keys and readable
 * by every user of the machine. A grade could leave a message there that any grade beside it
 * or after it reads and rewrites, whatever users each runs as. The grading sandbox starts its
 * first process (ns-init) under this program, so the filter binds everything in the sandbox:
 * the payload, the client hosts and whatever they start (a seccomp filter is inherited across
 * fork and exec and cannot be removed). It sets no_new_privs too: nothing in the sandbox gains
 * privileges by executing a set-user-ID program.
 *
 * Exit 70 when the filter cannot be installed (nothing runs then), 127 when PROGRAM cannot be
 * executed. Built by scripts/build-native.mjs (cc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE);
 * Linux only.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define NATIVE_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define NATIVE_ARCH AUDIT_ARCH_S390X
#else
#error "lab-nokeys: no seccomp architecture known for this target"
#endif

#define REFUSE BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

static struct sock_filter filter[] = {
    /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
    /* 2 */ REFUSE,
    /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    /* x32 calls share the x86-64 arch value and set bit 30 of the number */
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 3, 0),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_add_key, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_request_key, 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_keyctl, 0, 1),
    REFUSE,
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: lab-nokeys PROGRAM [ARGS...]\n");
    return 2;
  }
  struct sock_fprog program = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    fprintf(stderr, "lab-nokeys: cannot install the seccomp filter: %s\n", strerror(errno));
    return 70;
  }
  execv(argv[1], argv + 1);
  fprintf(stderr, "lab-nokeys: cannot execute %s: %s\n", argv[1], strerror(errno));
  return 127;
}
