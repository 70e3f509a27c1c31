package kafkasource

// onOwnerReq runs f on a session's owner.
type onOwnerReq struct {
	f     func(o *owner)
	reply chan struct{}
}

func (r onOwnerReq) handle(o *owner) {
	r.f(o)
	r.reply <- struct{}{}
}

// onOwner runs f on the owner of s's current session, after every request
// sent to it before, and waits for it; false if s has no session.
func onOwner(s *source, f func(o *owner)) bool {
	sess := s.cur.Load()
	if sess == nil {
		return false
	}
	reply := make(chan struct{}, 1)
	_, ok := call(sess, onOwnerReq{f: f, reply: reply}, reply)
	return ok
}
