# Shared by the scripts that compare this build with another (sourced, not run).

# build_other REV PACKAGE...: builds REV's PACKAGEs in release mode, in a worktree under
# target/compare/tree with its own target folder; their binaries are then in $other_bin.
build_other() {
  local rev=$1
  shift
  local root=$PWD tree=$PWD/target/compare/tree commit
  # Resolved here: inside the worktree, HEAD would name the worktree's own commit.
  commit="$(git rev-parse --verify "$rev^{commit}")"
  if [ -d "$tree" ]; then
    git -C "$tree" checkout --quiet --detach "$commit"
  else
    git worktree add --quiet --detach "$tree" "$commit"
  fi
  local packages=()
  for package in "$@"; do packages+=(-p "$package"); done
  (cd "$tree" && CARGO_TARGET_DIR="$root/target/compare/target" cargo build --quiet --release "${packages[@]}")
  other_bin="$root/target/compare/target/release"
}
