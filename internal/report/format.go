package report

import "fmt"

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
