module github.com/pgline/pgline

go 1.26
