// The one paging component of every list: pages through the server's page tokens
// (src/store/pagination.ts) with "Previous page" and "Next page", and says which rows are
// shown and whether more follow. The tokens of the pages seen are kept, so "Previous page"
// goes back exactly; a change of the filters (the `query` key) starts again at page 1, and
// every page is asked with the same filters.
import { useState } from 'preact/hooks';
import type { PageRequest } from './api.ts';
import { useLoad } from './ui.tsx';

/** The server's largest page (MAX_PAGE_SIZE): the portal asks for full pages. */
export const PORTAL_PAGE_SIZE = 100;

interface PagingState {
  query: string;
  tokens: string[];
  index: number;
}

export interface PagedList<R> {
  data: R | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  /** 0-based page number. */
  index: number;
  hasPrevious: boolean;
  hasMore: boolean;
  next: () => void;
  previous: () => void;
  pageSize: number;
}

/**
 * Loads one page of a list. `query` is everything the list is filtered by (JSON-comparable):
 * when it changes, paging starts again at page 1.
 */
export function usePagedList<R extends { nextPageToken: string }>(
  fetchPage: (page: PageRequest) => Promise<R>,
  query: unknown[],
  pageSize = PORTAL_PAGE_SIZE,
): PagedList<R> {
  const key = JSON.stringify(query);
  const [state, setState] = useState<PagingState>({ query: key, tokens: [''], index: 0 });
  const current = state.query === key ? state : { query: key, tokens: [''], index: 0 };
  const token = current.tokens[current.index] ?? '';
  const loaded = useLoad(() => fetchPage({ pageSize, pageToken: token }), [key, current.index, token]);
  const nextToken = loaded.loading ? '' : (loaded.data?.nextPageToken ?? '');
  return {
    ...loaded,
    index: current.index,
    hasPrevious: current.index > 0,
    hasMore: nextToken !== '',
    pageSize,
    next() {
      if (!nextToken) return;
      setState({
        query: key,
        tokens: [...current.tokens.slice(0, current.index + 1), nextToken],
        index: current.index + 1,
      });
    },
    previous() {
      if (current.index === 0) return;
      setState({ query: key, tokens: current.tokens, index: current.index - 1 });
    },
  };
}

/**
 * "Previous page" / "Next page" and where the reader is: "Rows 101–200, more on the next page".
 * `label` names the list ("Generations"), for the navigation's accessible name.
 */
export function Pager({ list, rows, label }: { list: PagedList<unknown>; rows: number; label: string }) {
  if (!list.data && !list.error) return null;
  if (!list.hasPrevious && !list.hasMore && rows === 0) return null;
  const first = list.index * list.pageSize + 1;
  const last = list.index * list.pageSize + rows;
  // While a page loads the rows on screen are the previous page's: say so, not their numbers.
  const where = list.loading
    ? `Loading page ${list.index + 1}…`
    : rows === 0
      ? `Page ${list.index + 1}: no rows`
      : `Rows ${first}–${last}${list.hasMore ? ', more on the next page' : list.hasPrevious ? ', the last page' : ''}`;
  return (
    <nav class="pager" aria-label={`${label}: pages`}>
      <button type="button" class="secondary" disabled={!list.hasPrevious || list.loading} onClick={list.previous}>
        Previous page
      </button>
      <span class="muted" role="status" aria-live="polite">
        {where}
      </span>
      <button type="button" class="secondary" disabled={!list.hasMore || list.loading} onClick={list.next}>
        Next page
      </button>
    </nav>
  );
}
