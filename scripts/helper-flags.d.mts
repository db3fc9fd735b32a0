export declare function helperFlags(shell?: 'zsh' | 'bash' | 'fish'): string[];
