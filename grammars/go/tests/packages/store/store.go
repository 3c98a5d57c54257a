package store

type Store struct {
	path string
}

func Open(path string) *Store {
	return &Store{path: path}
}

func (st *Store) Get(key string) string {
	return st.path + key
}
