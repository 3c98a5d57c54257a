package billing

func Open(account string) string {
	return normalise(account)
}
