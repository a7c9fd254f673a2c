"""Reading a store on a Git server without cloning it: sandboxes filled from the server
(``materialize``: ``memoryfs materialize --from URL``, ``recall --into`` such a sandbox)
over a blob-less partial clone (``partial_clone``)."""
