/** The list shape every list endpoint answers with. */
export interface Page<T> {
  data: T[];
  page: number;
  total: number;
  limit: number;
}

export interface PageRequest {
  page: number;
  limit: number;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.limit;
}
