package store

func (st *Store) Close() {
	st.path = ""
}
