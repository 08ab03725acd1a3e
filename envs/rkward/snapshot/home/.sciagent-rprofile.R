# The R profile of RKWard's R session (R_PROFILE_USER, set by the adapter): it runs the state
# channel whose code the adapter hands over in SCIAGENT_RK_CHANNEL, then drops that variable.
local({
    code <- Sys.getenv("SCIAGENT_RK_CHANNEL")
    Sys.unsetenv(c("SCIAGENT_RK_CHANNEL", "R_PROFILE_USER"))
    if (nzchar(code)) eval(parse(text = code, keep.source = FALSE), envir = globalenv())
})
