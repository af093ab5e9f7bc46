import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { isApiProblem } from './api';
import { App } from './App';
import { RouterProvider } from './router';
import { adoptTenantQuery, SessionProvider, setNotice } from './session';
import { adoptSignInLink } from './sign-in-link';
import './styles.css';

// Before anything renders: a `tenantctl console` link's code leaves the address bar at once.
const link = adoptSignInLink();
if (link.notice !== null) setNotice(link.notice);
adoptTenantQuery();

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal, a missing row or a rate limit will not change by asking again.
      retry: (count, error) => count < 2 && isApiProblem(error) && (error.status === 0 || error.status >= 500) && error.status !== 501,
      refetchOnWindowFocus: false,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider>
        <SessionProvider>
          <App />
        </SessionProvider>
      </RouterProvider>
    </QueryClientProvider>
  </StrictMode>,
);
