// What the explorer shows, in one object every module reads: the line played and where on it
// the page stands, the board's orientation, the selection, the editor, the answer shown.
// Nothing here knows the rules; positions and moves come from the API.

export const $ = (id) => document.getElementById(id);

/** `?embed=1`: the board and the moves alone, for another page to frame. */
export const embed = new URLSearchParams(location.search).get('embed') === '1';

export const state = {
  // The line played: entries {sfen, move, last: {from, to}}; after a royal capture the last
  // entry has sfen null and `captured: {before, after, winner}`, `after` the API's SFEN of the
  // game's last position.
  line: [],
  index: 0,
  flipped: false,
  selected: null, // {square: i} or {hand: kind}
  editor: null, // {board, toMove, hands, brush}
  replyPending: false,
  shown: null, // the probe shown, once it came
  autoplay: null, // the timer of the best line being played
};

/** The line's entry on the board. */
export const current = () => state.line[state.index];

export const sideName = (side) => (side === 'first' ? 'First player' : 'Second player');
