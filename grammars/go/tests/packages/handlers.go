package main

func (s *Server) Handle(key string) string {
	s.hits++
	s.log(key)
	return s.store.Get(key)
}

func (s *Server) Close() {
	s.store.Close()
	Open()
}
