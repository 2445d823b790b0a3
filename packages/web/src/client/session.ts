/**
 * The API key of this browser tab. Session storage, not local storage: the key
 * leaves with the tab, and another tab signs in on its own.
 */
const KEY = "stackvm.apiKey";

export const session = {
  get(): string | null {
    try {
      return sessionStorage.getItem(KEY);
    } catch {
      return null;
    }
  },
  set(key: string): void {
    sessionStorage.setItem(KEY, key);
  },
  clear(): void {
    sessionStorage.removeItem(KEY);
  },
};
