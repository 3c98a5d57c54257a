package main

import (
	"fmt"
	"net/http"

	"example.com/shop/billing"
	"example.com/shop/store"
)

func main() {
	s := NewServer(store.Open("shop.db"))
	s.Handle("apple")
	fmt.Println("ready")
	http.ListenAndServe(":8080", nil)
	s.Missing()
}

func charge() string {
	return billing.Open("acct")
}
