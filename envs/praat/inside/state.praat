# Dumps the Objects window as JSON into out$ without changing the selection for good.
procedure js: .s$
  .s$ = replace$ (.s$, "\", "\\", 0)
  .s$ = replace$ (.s$, """", "\""", 0)
  .s$ = replace$ (.s$, newline$, "\n", 0)
  .s$ = replace$ (.s$, tab$, "\t", 0)
  js.result$ = """" + .s$ + """"
endproc
procedure num: .x
  if .x = undefined
    num.result$ = "null"
  else
    num.result$ = fixed$ (.x, 6)
  endif
endproc

nsel = numberOfSelected ()
for i to nsel
  sel [i] = selected (i)
endfor
select all
n = numberOfSelected ()
for i to n
  ids [i] = selected (i)
  full$ [i] = selected$ (i)
endfor
json$ = "{""objects"": ["
for i to n
  id = ids [i]
  type$ = extractWord$ (full$ [i], "")
  name$ = replace$ (full$ [i], type$ + " ", "", 1)
  isSel = 0
  for k to nsel
    if sel [k] = id
      isSel = 1
    endif
  endfor
  @js: type$
  t$ = js.result$
  @js: name$
  nm$ = js.result$
  o$ = "{""id"": " + string$ (id) + ", ""type"": " + t$ + ", ""name"": " + nm$ + ", ""selected"": " + if isSel then "true" else "false" fi
  selectObject: id
  if type$ = "Sound"
    v = Get total duration
    @num: v
    o$ = o$ + ", ""duration"": " + num.result$
    v = Get sampling frequency
    @num: v
    o$ = o$ + ", ""sampling_frequency"": " + num.result$
    o$ = o$ + ", ""channels"": " + string$ (do ("Get number of channels"))
    v = Get start time
    @num: v
    o$ = o$ + ", ""start_time"": " + num.result$
    v = Get intensity (dB)
    @num: v
    o$ = o$ + ", ""intensity_db"": " + num.result$
  elsif type$ = "Pitch"
    v = Get mean: 0, 0, "Hertz"
    @num: v
    o$ = o$ + ", ""mean_f0"": " + num.result$
    o$ = o$ + ", ""voiced_frames"": " + string$ (do ("Count voiced frames"))
    v = Get time step
    @num: v
    o$ = o$ + ", ""time_step"": " + num.result$
    Save as text file: sciagent_scratch$
    v = extractNumber (readFile$ (sciagent_scratch$), "ceiling = ")
    deleteFile: sciagent_scratch$
    @num: v
    o$ = o$ + ", ""ceiling"": " + num.result$
    v = Get total duration
    @num: v
    o$ = o$ + ", ""duration"": " + num.result$
  elsif type$ = "Formant"
    v = Get time step
    @num: v
    o$ = o$ + ", ""time_step"": " + num.result$
    o$ = o$ + ", ""max_formants"": " + string$ (do ("Get maximum number of formants"))
  elsif type$ = "Intensity"
    v = Get mean: 0, 0, "energy"
    @num: v
    o$ = o$ + ", ""mean_db"": " + num.result$
    v = Get time step
    @num: v
    o$ = o$ + ", ""time_step"": " + num.result$
    v = Get maximum: 0, 0, "parabolic"
    @num: v
    o$ = o$ + ", ""max_db"": " + num.result$
  elsif type$ = "TextGrid"
    v = Get total duration
    @num: v
    o$ = o$ + ", ""duration"": " + num.result$
    nt = Get number of tiers
    o$ = o$ + ", ""tiers"": ["
    for t to nt
      v$ = Get tier name: t
      @js: v$
      tn$ = js.result$
      isInt = Is interval tier: t
      if t > 1
        o$ = o$ + ", "
      endif
      o$ = o$ + "{""name"": " + tn$ + ", ""class"": " + if isInt then """IntervalTier""" else """TextTier""" fi
      if isInt
        ni = Get number of intervals: t
        b$ = ""
        l$ = ""
        for j to ni
          v$ = Get label of interval: t, j
          @js: v$
          if j > 1
            l$ = l$ + ", "
          endif
          l$ = l$ + js.result$
          if j < ni
            v = Get end time of interval: t, j
            @num: v
            if j > 1
              b$ = b$ + ", "
            endif
            b$ = b$ + num.result$
          endif
        endfor
        o$ = o$ + ", ""n_intervals"": " + string$ (ni) + ", ""boundaries"": [" + b$ + "], ""labels"": [" + l$ + "]"
      else
        np = Get number of points: t
        o$ = o$ + ", ""n_points"": " + string$ (np)
      endif
      o$ = o$ + "}"
    endfor
    o$ = o$ + "]"
  elsif type$ = "Formant"
    v = Get mean: 1, 0, 0, "hertz"
    @num: v
    o$ = o$ + ", ""mean_f1"": " + num.result$
  endif
  o$ = o$ + "}"
  if i > 1
    json$ = json$ + ", "
  endif
  json$ = json$ + o$
endfor
json$ = json$ + "], ""n_objects"": " + string$ (n) + ", ""n_selected"": " + string$ (nsel) + "}"
# restore the selection the user had
if n > 0
  select all
  for i to n
    keep = 0
    for k to nsel
      if sel [k] = ids [i]
        keep = 1
      endif
    endfor
    if keep = 0
      minusObject: ids [i]
    endif
  endfor
endif
out$ = json$
