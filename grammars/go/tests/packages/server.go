package main

import "example.com/shop/store"

// Server serves the shop.
type Server struct {
	Logger
	store *store.Store
	hits  int
}

// NewServer makes a server over a store.
func NewServer(st *store.Store) *Server {
	return &Server{store: st}
}
