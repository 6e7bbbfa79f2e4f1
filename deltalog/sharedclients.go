package deltalog

import stdsync "sync"

// sharedClients keeps one storage client (or configuration) per key for the
// life of the process: every table whose URL parameters are the same shares
// it, with its credential chain and its connection pool. A client that
// could not be made is not kept: the next Open tries again.
type sharedClients[C any] struct {
	mu stdsync.Mutex
	m  map[string]*sharedClient[C]
}

type sharedClient[C any] struct {
	once stdsync.Once
	c    C
	err  error
}

// get returns the client for key, making it with create on first use. Opens
// of other keys do not wait while one is made.
func (s *sharedClients[C]) get(key string, create func() (C, error)) (C, error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]*sharedClient[C]{}
	}
	e, ok := s.m[key]
	if !ok {
		e = &sharedClient[C]{}
		s.m[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.c, e.err = create() })
	if e.err != nil {
		s.mu.Lock()
		if s.m[key] == e {
			delete(s.m, key)
		}
		s.mu.Unlock()
	}
	return e.c, e.err
}
