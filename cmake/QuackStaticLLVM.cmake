#===- QuackStaticLLVM.cmake - tools linked against static LLVM/MLIR -------===#
#
# A process that loads libLLVM and libMLIR spends about 20 ms before main()
# resolving their symbols and touching their relocated pages; quackc runs
# once per kernel variant (a JIT cache miss, a bundle job), so that start
# is a quarter of a small kernel's compile. Where LLVM's and MLIR's static
# archives are installed (Debian's llvm-22-dev and libmlir-22-dev ship
# them), the tools link those instead.
#
# MLIR's exported static targets name the LLVM shared library in their
# link interface (the packages are built with LLVM_LINK_LLVM_DYLIB), and so
# do quack's libraries through QUACK_MLIR_LIBS; a tool that linked both the
# dylib and the archives would still load the dylib (its start cost) and
# run with two copies of LLVM's global state (options, registries). So a
# statically linked tool links no target that carries them: it takes
# quack's archives by file, with every MLIR and LLVM archive, in one group
# that the linker rescans until nothing is missing, and only the objects it
# needs are pulled in.
#
#===----------------------------------------------------------------------===#

set(_quack_static_default OFF)
if(EXISTS "${LLVM_LIBRARY_DIR}/libLLVMSupport.a" AND
   EXISTS "${LLVM_LIBRARY_DIR}/libMLIRIR.a")
  set(_quack_static_default ON)
endif()
option(QUACK_LINK_LLVM_STATIC
  "Link quackc and quack-opt against LLVM's and MLIR's static archives (default: on where they are installed)"
  ${_quack_static_default})

if(QUACK_LINK_LLVM_STATIC)
  file(GLOB _quack_mlir_archives "${LLVM_LIBRARY_DIR}/libMLIR*.a")
  # Archives for bindings, tests and execution engines define symbols that
  # others define as well, and no tool needs them.
  list(FILTER _quack_mlir_archives EXCLUDE REGEX
    "libMLIR(CAPI|Python|.*Test|.*Lsp|.*Exec|.*Jit|.*Runner)[^/]*\\.a$")
  file(GLOB _quack_llvm_archives "${LLVM_LIBRARY_DIR}/libLLVM*.a")
  if(NOT _quack_mlir_archives OR NOT _quack_llvm_archives)
    message(FATAL_ERROR "QUACK_LINK_LLVM_STATIC: no libMLIR*.a or libLLVM*.a "
      "in ${LLVM_LIBRARY_DIR}; configure with -DQUACK_LINK_LLVM_STATIC=OFF")
  endif()
  # What LLVMSupport needs from the system (its compression and timers).
  # Debian ships libzstd.so.1 without the libzstd.so of its -dev package.
  find_library(QUACK_ZLIB_LIBRARY NAMES z libz.so.1)
  find_library(QUACK_ZSTD_LIBRARY NAMES zstd libzstd.so.1)
  set(_quack_static_system_libs)
  foreach(lib QUACK_ZLIB_LIBRARY QUACK_ZSTD_LIBRARY)
    if(${lib})
      list(APPEND _quack_static_system_libs ${${lib}})
    endif()
  endforeach()
  list(APPEND _quack_static_system_libs rt dl m pthread)
  # For add_llvm_executable: link no libLLVM itself.
  set(QUACK_TOOL_LLVM_FLAGS DISABLE_LLVM_LINK_LLVM_DYLIB)
  message(STATUS "quack: tools link ${LLVM_LIBRARY_DIR}/lib{MLIR,LLVM}*.a "
    "statically (QUACK_LINK_LLVM_STATIC)")
endif()

# The quack libraries `roots` need, themselves included: every target named
# Quack* reachable through LINK_LIBRARIES.
function(quack_collect_libraries out)
  set(seen)
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue t)
    if(NOT TARGET ${t} OR NOT t MATCHES "^Quack" OR t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(deps ${t} LINK_LIBRARIES)
    if(deps)
      list(APPEND queue ${deps})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# A tool is `add_llvm_executable(name ${QUACK_TOOL_LLVM_FLAGS} sources...)`
# followed by `quack_link_tool(name roots...)`.
#
# Links the tool `target` against the quack libraries `roots` (and what they
# need), and against LLVM and MLIR: their static archives under
# QUACK_LINK_LLVM_STATIC, else QUACK_MLIR_LIBS.
function(quack_link_tool target)
  if(NOT QUACK_LINK_LLVM_STATIC)
    target_link_libraries(${target} PRIVATE ${ARGN} ${QUACK_MLIR_LIBS})
    return()
  endif()
  quack_collect_libraries(libs ${ARGN})
  add_dependencies(${target} ${libs})
  set(files)
  foreach(lib ${libs})
    list(APPEND files "$<TARGET_FILE:${lib}>")
  endforeach()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${files} ${_quack_mlir_archives}
    ${_quack_llvm_archives} -Wl,--end-group ${_quack_static_system_libs})
endfunction()
