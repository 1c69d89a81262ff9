import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';

import { api, isApiError } from '../api/client';
import type { LoginRequest, User } from '../api/types';

type AuthStatus = 'loading' | 'ready';

interface AuthState {
  status: AuthStatus;
  user: User | null;
  /** Signs in; throws ApiError on failure (400 bad credentials, 429 throttled). */
  login: (credentials: LoginRequest) => Promise<User>;
  /** Signs out; throws ApiError on failure, leaving the user signed in. */
  logout: () => Promise<void>;
  /** Asks the server who is signed in (e.g. after a 403: the session may have expired). */
  refresh: () => Promise<void>;
}

const AuthContext = createContext<AuthState | null>(null);

interface AuthProviderProps {
  /** The user from the page's bootstrap; `undefined` means unknown, so ask the API. */
  initialUser?: User | null;
  children: ReactNode;
}

export function AuthProvider({ initialUser, children }: AuthProviderProps) {
  const [user, setUser] = useState<User | null>(initialUser ?? null);
  const [status, setStatus] = useState<AuthStatus>(initialUser === undefined ? 'loading' : 'ready');

  const refresh = useCallback(async () => {
    try {
      setUser(await api.me());
    } catch (error) {
      // 403 is "not signed in"; on any other failure we cannot tell, and the
      // login page is the safe place to land.
      if (!isApiError(error)) throw error;
      setUser(null);
    } finally {
      setStatus('ready');
    }
  }, []);

  useEffect(() => {
    if (initialUser === undefined) void refresh();
  }, [initialUser, refresh]);

  const login = useCallback(async (credentials: LoginRequest) => {
    const signedIn = await api.login(credentials);
    setUser(signedIn);
    return signedIn;
  }, []);

  const logout = useCallback(async () => {
    await api.logout();
    setUser(null);
  }, []);

  const value = useMemo(
    () => ({ status, user, login, logout, refresh }),
    [status, user, login, logout, refresh],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuth must be used inside <AuthProvider>');
  return state;
}
