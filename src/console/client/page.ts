// What every page of the console gives the router: its title and how to stop its timers/sockets.

export interface Page {
  readonly title: string;
  close(): void;
}

export function viewHref(view: string): string {
  return `#/views/${encodeURIComponent(view)}`;
}
