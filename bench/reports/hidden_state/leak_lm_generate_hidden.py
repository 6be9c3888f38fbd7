# Source: https://github.com/pytorch/examples/issues/12
# Report: word-language-model generate.py grew GPU memory from ~500MB to ~4GB while sampling words, then OOM; the sampling loop recorded autograd history through the carried hidden state
# Shape: hidden is fed back into the model every sampled word with grad enabled (no no_grad / volatile), so each step's graph links to the previous one
# Expect: TML005 line 26; TML003 line 26
import argparse

import torch

import data


def load_model(path, device):
    with open(path, "rb") as f:
        model = torch.load(f, map_location=device)
    return model


def generate_text(model, corpus, out_path, n_words=1000, temperature=1.0, device="cuda"):
    model.eval()
    ntokens = len(corpus.dictionary)
    hidden = model.init_hidden(1)
    inp = torch.randint(ntokens, (1, 1), dtype=torch.long, device=device)

    with open(out_path, "w") as outf:
        for i in range(n_words):
            output, hidden = model(inp, hidden)  # expect: TML005, TML003
            word_weights = output.squeeze().div(temperature).exp().cpu()
            word_idx = torch.multinomial(word_weights, 1)[0]
            inp.fill_(word_idx)

            word = corpus.dictionary.idx2word[word_idx]
            outf.write(word + ("\n" if i % 20 == 19 else " "))
            if i % 100 == 0:
                print(f"| Generated {i}/{n_words} words")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data/wikitext-2")
    parser.add_argument("--checkpoint", default="./model.pt")
    parser.add_argument("--outf", default="generated.txt")
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--temperature", type=float, default=1.0)
    args = parser.parse_args()
    device = torch.device("cuda")
    corpus = data.Corpus(args.data)
    model = load_model(args.checkpoint, device)
    generate_text(model, corpus, args.outf, args.words, args.temperature, device)
