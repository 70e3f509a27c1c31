package tryrun

import "syscall"

// procAttr puts the child in its own process group (a Ctrl-C in the
// studio's terminal reaches the studio, which stops the child itself) and
// has the kernel send it SIGTERM if the studio dies without stopping it,
// so that no pipeline outlives its studio.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
