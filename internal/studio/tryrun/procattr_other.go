//go:build !linux

package tryrun

import "syscall"

// procAttr puts the child in its own process group (a Ctrl-C in the
// studio's terminal reaches the studio, which stops the child itself).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
