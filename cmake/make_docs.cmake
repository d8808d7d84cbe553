# cmake -DTASKLENS=<tasklens> -DVERSION=<v> -DOUT_DIR=<dir> -P make_docs.cmake: writes the man
# page (tasklens.1) and the bash completion (tasklens.bash) from tasklens's own --help texts, so
# that they say exactly what the binary does.
set(commands record report whatif advise tasks sched predict diff export view)
execute_process(COMMAND "${TASKLENS}" --help OUTPUT_VARIABLE main_help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_docs: ${TASKLENS} --help failed")
endif()

# roff: every line verbatim (.nf), a leading dot or quote and backslashes escaped.
function(roff_block text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

roff_block("${main_help}" main_block)
set(man ".TH TASKLENS 1 \"\" \"tasklens ${VERSION}\" \"User Commands\"\n")
string(APPEND man ".SH NAME\ntasklens \\- a parallelism profiler for OpenMP and oneTBB programs\n")
string(APPEND man ".SH SYNOPSIS\n.B tasklens\n\\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n")
string(APPEND man ".SH DESCRIPTION\n${main_block}")
string(APPEND man ".SH COMMANDS\n")
set(completion_cases "")
foreach(command IN LISTS commands)
  execute_process(COMMAND "${TASKLENS}" ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "make_docs: ${TASKLENS} ${command} --help failed")
  endif()
  roff_block("${help}" block)
  string(APPEND man ".SS ${command}\n${block}")
  # The options: every --long and -s name of the option lines.
  string(REGEX MATCHALL "\n  (-[a-zA-Z],)?--[a-z][a-z0-9-]*" lines "${help}")
  set(options "")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "-?-[a-zA-Z][a-z0-9-]*" names "${line}")
    list(APPEND options ${names})
  endforeach()
  list(REMOVE_DUPLICATES options)
  list(JOIN options " " options)
  string(APPEND completion_cases "    ${command}) options=\"${options}\" ;;\n")
endforeach()
string(APPEND man ".SH FILES\n.TP\n.B tasklens.data\nthe trace \\fBrecord\\fR writes and the other commands read by default\n")
string(APPEND man ".SH SEE ALSO\nThe documentation in the source tree's docs/ directory.\n")
file(WRITE "${OUT_DIR}/tasklens.1" "${man}")

list(JOIN commands " " command_list)
file(WRITE "${OUT_DIR}/tasklens.bash" "# bash completion for tasklens (generated from its --help texts)
_tasklens() {
  local cur=\${COMP_WORDS[COMP_CWORD]} options
  if ((COMP_CWORD == 1)); then
    COMPREPLY=(\$(compgen -W \"${command_list} --help --version\" -- \"\$cur\"))
    return
  fi
  case \${COMP_WORDS[1]} in
${completion_cases}    *) options=\"--help\" ;;
  esac
  if [[ \$cur == -* ]]; then
    COMPREPLY=(\$(compgen -W \"\$options\" -- \"\$cur\"))
  else
    COMPREPLY=(\$(compgen -f -- \"\$cur\"))
  fi
}
complete -o filenames -F _tasklens tasklens
")
