package main

import (
	"fmt"
	"time"
)

// dash marks a figure that does not apply or a variant a driver lacks.
const dash = "—"

func fmtRate(x float64) string {
	switch {
	case x == 0:
		return dash
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 1:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

func fmtCount(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func fmtBytes(x float64) string {
	switch {
	case x >= 1<<30:
		return fmt.Sprintf("%.1fGiB", x/(1<<30))
	case x >= 1<<20:
		return fmt.Sprintf("%.1fMiB", x/(1<<20))
	case x >= 1<<10:
		return fmt.Sprintf("%.1fKiB", x/(1<<10))
	}
	return fmt.Sprintf("%.0fB", x)
}

func fmtNS(ns int64) string {
	if ns <= 0 {
		return dash
	}
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.String()
}

func fmtRatio(r *float64) string {
	if r == nil {
		return dash
	}
	return fmt.Sprintf("%.2f×", *r)
}
