package main

import "os"

type Logger struct{}

func (l Logger) log(message string) {
	if os.Getenv("QUIET") == "" {
		println(message)
	}
}
