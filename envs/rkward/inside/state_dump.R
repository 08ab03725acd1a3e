# Runs in RKWard's R session through the state channel (in a child of the global environment);
# its value is a JSON-able summary of the session:
#   wd, objects {name: summary} (at most 200, hidden names too), devices (open graphics devices),
#   output (the HTML body of RKWard's output page, where its dialogs print their results).
# A summary has class, type, length; a data frame adds nrow, ncol, names and per column
# {class, n, na, mean, sd, min, max, sum, levels, counts}; a model (lm, glm) adds coefficients,
# formula, n, r_squared (coefficients keyed by the variables' names, also for the terms
# df[["x"]] that RKWard's dialogs write); a test (htest) its statistic, parameter, p_value,
# estimate, conf_int, method; a number vector its n, mean, sd, min, max, sum, first values; a table or matrix its
# dim and values (at most 400).
local({
    col_summary <- function(x) {
        out <- list(class = class(x)[1], n = length(x), na = sum(is.na(x)))
        if (is.numeric(x) && !is.factor(x)) {
            v <- as.double(x[is.finite(x)])
            out$mean <- if (length(v)) mean(v) else NULL
            out$sd <- if (length(v) > 1) stats::sd(v) else NULL
            out$min <- if (length(v)) min(v) else NULL
            out$max <- if (length(v)) max(v) else NULL
            out$sum <- if (length(v)) sum(v) else NULL
        } else if (is.factor(x) || is.character(x) || is.logical(x)) {
            tab <- table(as.character(x))
            if (length(tab) <= 50) out$counts <- as.list(tab)
            if (is.factor(x)) out$levels <- utils::head(levels(x), 50)
        }
        out
    }
    summarise <- function(obj) {
        s <- list(class = class(obj), type = typeof(obj), length = length(obj))
        if (is.data.frame(obj)) {
            s$nrow <- nrow(obj)
            s$ncol <- ncol(obj)
            s$names <- utils::head(names(obj), 100)
            s$columns <- lapply(obj[utils::head(seq_along(obj), 100)], col_summary)
        } else if (inherits(obj, "htest")) {
            s$statistic <- unname(obj$statistic)
            s$parameter <- unname(obj$parameter)
            s$p_value <- obj$p.value
            s$estimate <- as.list(obj$estimate)
            s$conf_int <- as.numeric(obj$conf.int)
            s$method <- obj$method
        } else if (inherits(obj, c("lm", "glm"))) {
            # a model fitted by the Linear Regression dialog names its terms
            # trial[["arm"]]Placebo: keyed here as the console's armPlacebo
            co <- stats::coef(obj)
            names(co) <- gsub('[A-Za-z.][A-Za-z0-9._]*\\[\\["([^"]+)"\\]\\]', "\\1", names(co))
            s$coefficients <- as.list(co)
            s$formula <- paste(deparse(stats::formula(obj)), collapse = " ")
            s$n <- length(stats::residuals(obj))
            # summary.lm, not summary: an aov fit's own summary has no R squared
            if (!inherits(obj, "glm")) s$r_squared <- stats::summary.lm(obj)$r.squared
        } else if (inherits(obj, "survfit")) {
            s$n <- obj$n
        } else if (is.table(obj) || is.matrix(obj)) {
            s$dim <- dim(obj)
            s$dimnames <- dimnames(obj)
            if (length(obj) <= 400 && is.numeric(obj)) s$values <- as.numeric(obj)
        } else if (is.numeric(obj) && is.null(dim(obj))) {
            s$names <- utils::head(names(obj), 50)
            s$summary <- col_summary(obj)
            s$values <- utils::head(as.numeric(obj), 50)
        } else if (is.character(obj)) {
            s$values <- utils::head(obj, 20)
        } else if (is.list(obj) && !is.function(obj)) {
            s$names <- utils::head(names(obj), 50)
        }
        s
    }
    env <- globalenv()
    names <- utils::head(sort(ls(env, all.names = TRUE)), 200)
    objects <- lapply(names, function(n) tryCatch(summarise(get(n, envir = env)),
                                                    error = function(e) list(error = conditionMessage(e))))
    names(objects) <- names
    # the output page the Analysis dialogs print to (its body, at most the last 200 000
    # characters): their results are there, not in the workspace
    output <- tryCatch({
        file <- rkward::rk.get.output.html.file()
        html <- if (is.character(file) && length(file) == 1L && file.exists(file))
            paste(readLines(file, warn = FALSE), collapse = "\n") else ""
        html <- sub("(?s)^.*?<body>", "", html, perl = TRUE)
        if (nchar(html) > 200000L) substring(html, nchar(html) - 199999L) else html
    }, error = function(e) "")
    list(wd = getwd(), objects = if (length(objects)) objects else structure(list(), names = character()),
         devices = as.list(names(grDevices::dev.list())), output = output)
})
