# RKWard's state channel, run once as the R profile (R_PROFILE_USER) of the R session that
# RKWard's backend starts inside the program zone. It loads tcltk's namespace (part of R) and opens a Tcl server socket
# on 127.0.0.1:PORT in the zone's own network namespace; RKWard's backend runs R's event
# handlers while it waits for commands, so Tcl serves the socket whenever R is idle. A request
# is one line "NONCE HEX" (HEX: the R code, UTF-8 bytes in hexadecimal); the code runs in the
# global environment (MODE g) or in a child of it (MODE l), and the reply is one JSON line
# {"nonce": NONCE, "ok": true, "out": <the value of the code's last expression>} or "ok":
# false with the error message. Nothing here is kept in the global environment.
local({
    port <- as.integer(Sys.getenv("SCIAGENT_RK_PORT", "47311"))
    tcl <- tcltk::tcl
    tclvalue <- tcltk::tclvalue
    .Tcl <- tcltk::.Tcl
    keep <- new.env()
    jstr <- function(s) {
        s <- enc2utf8(as.character(s))
        s <- gsub("\\", "\\\\", s, fixed = TRUE)
        s <- gsub("\"", "\\\"", s, fixed = TRUE)
        s <- gsub("\n", "\\n", s, fixed = TRUE)
        s <- gsub("\r", "\\r", s, fixed = TRUE)
        s <- gsub("\t", "\\t", s, fixed = TRUE)
        s <- gsub("[[:cntrl:]]", " ", s)
        paste0("\"", s, "\"")
    }
    json <- function(x, depth = 0L) {
        if (depth > 8L) return("null")
        if (is.null(x)) return("null")
        if (is.list(x)) {
            nm <- names(x)
            if (!is.null(nm)) {
                if (!length(x)) return("{}")
                nm[is.na(nm) | nm == ""] <- paste0("V", seq_along(x))[is.na(nm) | nm == ""]
                vals <- vapply(x, json, "", depth = depth + 1L)
                return(paste0("{", paste0(jstr(nm), ":", vals, collapse = ","), "}"))
            }
            vals <- vapply(x, json, "", depth = depth + 1L)
            return(paste0("[", paste0(vals, collapse = ","), "]"))
        }
        if (is.factor(x)) x <- as.character(x)
        if (!is.atomic(x)) return(jstr(paste(class(x), collapse = " ")))
        if (is.logical(x)) {
            v <- ifelse(is.na(x), "null", ifelse(x, "true", "false"))
        } else if (is.numeric(x)) {
            v <- ifelse(is.finite(x), formatC(as.double(x), digits = 15, format = "g"), "null")
            v <- trimws(v)
        } else {
            v <- ifelse(is.na(x), "null", jstr(x))
        }
        if (length(x) == 1L) v else paste0("[", paste0(v, collapse = ","), "]")
    }
    unhex <- function(h) {
        if (!nchar(h)) return("")
        i <- seq(1L, nchar(h), 2L)
        rawToChar(as.raw(strtoi(substring(h, i, i + 1L), 16L)))
    }
    serve <- function() {
        chan <- tclvalue("::sciagent_chan")
        line <- tclvalue("::sciagent_line")
        parts <- strsplit(line, " ", fixed = TRUE)[[1]]
        nonce <- if (length(parts) >= 1L) parts[1] else ""
        reply <- tryCatch({
            if (length(parts) != 3L) stop("a request is 'NONCE MODE HEX'")
            code <- unhex(parts[3])
            where <- if (parts[2] == "g") globalenv() else new.env(parent = globalenv())
            value <- withVisible(eval(parse(text = code, keep.source = FALSE), envir = where))$value
            paste0("{\"nonce\":", jstr(nonce), ",\"ok\":true,\"out\":", json(value), "}")
        }, error = function(e) {
            paste0("{\"nonce\":", jstr(nonce), ",\"ok\":false,\"error\":",
                   jstr(conditionMessage(e)), "}")
        })
        tcl("fconfigure", chan, "-blocking", 1)
        tcl("puts", chan, reply)
        tcl("close", chan)
        invisible(NULL)
    }
    callback <- tcltk::.Tcl.callback(serve, keep)
    assign("serve", serve, envir = keep)
    assign("callback", callback, envir = keep)
    .Tcl(paste0(
        "proc ::sciagent_accept {chan addr port} {\n",
        "  fconfigure $chan -blocking 0 -translation lf -encoding utf-8 -buffering full\n",
        "  fileevent $chan readable [list ::sciagent_read $chan]\n",
        "}\n",
        "proc ::sciagent_read {chan} {\n",
        "  if {[catch {gets $chan line} n] || $n < 0} {\n",
        "    if {[catch {eof $chan} e] || $e} {catch {close $chan}}\n",
        "    return\n",
        "  }\n",
        "  fileevent $chan readable {}\n",
        "  set ::sciagent_chan $chan\n",
        "  set ::sciagent_line $line\n",
        "  ", callback, "\n",
        "}\n"))
    .Tcl(sprintf("socket -server ::sciagent_accept -myaddr 127.0.0.1 %d", port))
    # Commands completed at R's top level (RKWard's console and scripts, not its own
    # internal calls): the adapter waits for the first, the console's start-up command.
    keep$tasks <- 0L
    addTaskCallback(function(...) {
        keep$tasks <- keep$tasks + 1L
        TRUE
    }, name = "sciagent")
    options(sciagent.channel = keep)  # reachable from a root: never collected
    invisible(NULL)
})
