// Package sqllex reads SQL text the way PostgreSQL's lexer does, far enough
// to tell the driver what it needs to know before sending the text: the
// first keyword, how many statements there are, whether a COPY FROM STDIN
// may run, whether prepared statements may be deallocated and whether
// search_path may change.
//
// It is not a parser. It splits the text into tokens (words, strings,
// quoted identifiers, dollar-quoted bodies, parameters, punctuation) and
// skips white space and comments, so that a word inside a string or a
// semicolon inside a comment is never mistaken for SQL.
//
// # Lexical rules
//
// The rules are those of PostgreSQL's "Lexical Structure" chapter with
// standard_conforming_strings on:
//
//   - '...' strings where a doubled quote stands for a quote; E'...'
//     strings where a backslash also escapes; B'...', X'...', N'...' and
//     U&'...' read like '...'. A string ended and restarted across a
//     newline (E'a'<newline>'b') continues the first one, escapes included.
//   - "..." and U&"..." quoted identifiers with "" for a quote.
//   - $tag$...$tag$ dollar quotes; $1 is a parameter, and foo$bar$ is one
//     identifier.
//   - -- comments to the end of the line (\n or \r) and nesting /* */
//     comments.
//
// An unterminated string, identifier, dollar quote or comment runs to the
// end of the text. Scan never panics and never allocates.
//
// # Conservative answers
//
// Info errs where a mistake costs least: CopyFromStdin, Deallocates and
// ChangesSearchPath may be true for a text that does none of these (a DO
// block that only mentions them, a statement that fails); yet outside a
// DO block a string constant is data, and the words in it count for none
// of them (set_config's first argument aside). Statements may count a
// function body in BEGIN ATOMIC ... END as several statements, and
// KeepsOwnSync is true when the first keyword is unknown. With
// standard_conforming_strings off, PostgreSQL reads a backslash in '...'
// strings as an escape, so a text with a backslash may split into other
// tokens: Scan reads it both ways and flags what either reading finds.
package sqllex
