/**
 * The core's refusals as BCB's API Pix says them: in Portuguese. The core words each refusal once,
 * in English (the root dialect shows it as it is); this view says each one again here, sentence
 * by sentence, with the same fields and values. A sentence it does not know is said by what it
 * refused (its code), never in English: a test sends the refusals of every `/v2` operation and
 * checks that none reads as English.
 */

type Rule = readonly [RegExp, (...groups: string[]) => string];

/** A field of the request, as a sentence names it: `O campo valor.original`. */
const campo = (name: string) => `O campo ${name}`;

/** What the core says of a field's value (`must be greater than 0`), in Portuguese. */
const RAZOES: readonly Rule[] = [
  [/^must be a decimal string with 2 places(?:, greater than 0)? \("[\d.]+"\)$/, () => 'deve ser um decimal com 2 casas (por exemplo, "10.00")'],
  [/^must be greater than 0$/, () => 'deve ser maior que 0'],
  [/^must be at most ([\d.]+)$/, (max) => `deve ser no máximo ${max}`],
  [/^must be at most (\d+)%$/, (max) => `deve ser no máximo ${max}%`],
  [/^must be less than 100%$/, () => 'deve ser menor que 100%'],
  [/^must be less than valor\.original$/, () => 'deve ser menor que valor.original'],
  [/^must be (\d+) to (\d+)$/, (min, max) => `deve estar entre ${min} e ${max}`],
  [/^must be a real date \(YYYY-MM-DD\)$/, () => 'deve ser uma data válida (AAAA-MM-DD)'],
  [/^must not be after calendario\.dataDeVencimento$/, () => 'não pode ser posterior a calendario.dataDeVencimento'],
  [/^must not be before the charge's creation \(([\d-]+)\)$/, (day) => `não pode ser anterior à criação da cobrança (${day})`],
  [/^must not repeat a data$/, () => 'não pode repetir uma data'],
  [/^must have 1 to 3 elements with modalidade 1 or 2$/, () => 'deve ter de 1 a 3 elementos com modalidade 1 ou 2'],
  [/^is not allowed with modalidade 1 or 2: use descontoDataFixa$/, () => 'não é permitido com modalidade 1 ou 2: use descontoDataFixa'],
  [/^is not allowed with modalidade 3 to 6: use valorPerc$/, () => 'não é permitido com modalidade 3 a 6: use valorPerc'],
  [/^is required with modalidade 3 to 6$/, () => 'é obrigatório com modalidade 3 a 6'],
  [/^is required$/, () => 'é obrigatório'],
  [/^must be a date \(YYYY-MM-DD\)$/, () => 'deve ser uma data (AAAA-MM-DD)'],
  [/^must be a decimal with 2 places greater than 0$/, () => 'deve ser um decimal com 2 casas maior que 0'],
  [/^must carry either cpf or cnpj$/, () => 'deve ter cpf ou cnpj, não ambos'],
  [/^must be a valid CPF: 11 digits with valid check digits$/, () => 'deve ser um CPF válido: 11 dígitos com dígitos verificadores corretos'],
  [/^must be a valid CNPJ: 14 characters with valid check digits$/, () => 'deve ser um CNPJ válido: 14 caracteres com dígitos verificadores corretos'],
  [/^must be an RFC 3339 timestamp$/, () => 'deve ser um instante RFC 3339'],
  [/^must be a date \(YYYY-MM-DD\) or an RFC 3339 timestamp$/, () => 'deve ser uma data (AAAA-MM-DD) ou um instante RFC 3339'],
  [/^must be between the years 0001 and 9999 in UTC$/, () => 'deve estar entre os anos 0001 e 9999 (UTC)'],
  [/^is not a valid PIX key \(CPF, CNPJ, e-mail, \+55 phone or EVP\)$/, () => 'não é uma chave Pix válida (CPF, CNPJ, e-mail, telefone +55 ou EVP)'],
  [/^must use HTTPS$/, () => 'deve usar HTTPS'],
  [/^must be an absolute HTTPS URL$/, () => 'deve ser uma URL HTTPS absoluta'],
  [/^must not carry credentials$/, () => 'não pode conter credenciais'],
  [/^must name a host$/, () => 'deve nomear um host'],
  [/^must be at most (\d+) characters$/, (max) => `deve ter no máximo ${max} caracteres`],
  [/^must be the recurrence's fixed amount \(valor\.valorRec\)$/, () => 'deve ser o valor fixo da recorrência (valor.valorRec)'],
];

/** Whole sentences of the core, in Portuguese. */
const FRASES: readonly Rule[] = [
  // A field and what is wrong with its value (the fields of cob, cobv, valor's rules, lists, URLs).
  [/^([A-Za-z][\w.[\]]*) (must .+|is (?:not allowed|required) .+|is required|is not a valid PIX key .+)$/, (field, reason) => `${campo(field)} ${razao(reason)}.`],
  [/^devedor\.cpf must be a valid CPF: 11 digits with valid check digits$/, () => 'O campo devedor.cpf deve ser um CPF válido: 11 dígitos com dígitos verificadores corretos.'],
  [/^devedor\.cnpj must be a valid CNPJ: 14 characters with valid check digits$/, () => 'O campo devedor.cnpj deve ser um CNPJ válido: 14 caracteres com dígitos verificadores corretos.'],
  [/^devedor must have either cpf or cnpj, not both$/, () => 'O campo devedor deve ter cpf ou cnpj, não ambos.'],
  [/^devedor\.cpf or devedor\.cnpj is required$/, () => 'O campo devedor.cpf ou devedor.cnpj é obrigatório.'],
  [/^devedor is required: nome and cpf or cnpj$/, () => 'O campo devedor é obrigatório: nome e cpf ou cnpj.'],
  [/^devedor\.nome must not be blank$/, () => 'O campo devedor.nome não pode estar em branco.'],
  [/^chave is not a key of this account$/, () => 'O campo chave não é uma chave Pix da conta.'],
  [/^The account has no PIX key: register one, or send chave$/, () => 'A conta não tem chave Pix: registre uma, ou informe chave.'],
  [/^valor\.retirada must have exactly one of saque or troco$/, () => 'O campo valor.retirada deve ter exatamente um de saque ou troco.'],
  [/^valor\.modalidadeAlteracao must be 0 when valor\.retirada is present$/, () => 'O campo valor.modalidadeAlteracao deve ser 0 quando há valor.retirada.'],
  [/^valor\.original must be 0\.00 with valor\.retirada\.saque$/, () => 'O campo valor.original deve ser 0.00 com valor.retirada.saque.'],
  [/^status REMOVIDA_PELO_USUARIO_RECEBEDOR removes the charge: send it alone, without other changes$/, () => 'O status REMOVIDA_PELO_USUARIO_RECEBEDOR remove a cobrança: envie-o sozinho, sem outras alterações.'],
  [/^body must change at least one field$/, () => 'A requisição deve alterar ao menos um campo.'],
  [/^loc\.id (\d+) is not a location of this account$/, (id) => `O campo loc.id (${id}) não é uma location da conta.`],
  [/^loc\.id (\d+) is a location of tipoCob (\w+), not (\w+)$/, (id, kind, wanted) => `O campo loc.id (${id}) é uma location de tipoCob ${kind}, não ${wanted}.`],
  [/^loc\.id (\d+) is already linked to the charge (\w+)$/, (id, txid) => `O campo loc.id (${id}) já está vinculado à cobrança ${txid}.`],
  [/^The account has no payload location (\d+)$/, (id) => `A conta não tem a location ${id}.`],
  // Pix Automático: recurrences and their locations.
  [/^The account has no payload location of recurrences (\S+)$/, (id) => `A conta não tem a location de recorrência ${id}.`],
  [/^loc (\d+) is not a location of recurrences of this account$/, (id) => `O campo loc (${id}) não é uma location de recorrência da conta.`],
  [/^loc (\d+) is already the location of the recurrence (\w+)$/, (id, rec) => `O campo loc (${id}) já é a location da recorrência ${rec}.`],
  [/^(calendario\.dataInicial|calendario\.dataFinal) ([\d-]+) is before the recurrence's creation \(([\d-]+)\)$/, (f, day, created) => `${campo(f)} (${day}) é anterior à criação da recorrência (${created}).`],
  [/^calendario\.dataFinal ([\d-]+) is before calendario\.dataInicial$/, (day) => `O campo calendario.dataFinal (${day}) é anterior a calendario.dataInicial.`],
  [/^calendario\.dataInicial ([\d-]+) is after calendario\.dataFinal$/, (day) => `O campo calendario.dataInicial (${day}) é posterior a calendario.dataFinal.`],
  [/^valor\.valorMinimoRecebedor cannot be given with valor\.valorRec .*$/, () => 'Os campos valor.valorRec e valor.valorMinimoRecebedor não podem vir juntos (um valor fixo não tem mínimo).'],
  [/^recebedor: a recurrence is charged by a company.*$/, () => 'O usuário recebedor de uma recorrência é uma pessoa jurídica: esta conta não tem CNPJ.'],
  [/^The account has no recurrence (\w+)$/, (id) => `A conta não tem a recorrência ${id}.`],
  [/^The recurrence (\w+) is (\w+): it takes no more changes$/, (id, status) => `A recorrência ${id} está ${status}: não aceita mais alterações.`],
  [/^(loc|calendario\.dataInicial) changes only while the recurrence is CRIADA \(it is (\w+)\)$/, (f, status) => `${campo(f)} só pode ser alterado enquanto a recorrência está CRIADA (está ${status}).`],
  // Pix Automático: solicitations, recurring charges and their retries, webhooks.
  [/^idRec (\w+) names no recurrence of this account$/, (id) => `O campo idRec (${id}) não corresponde a uma recorrência da conta.`],
  [/^idRec (\w+): the recurrence is (\w+), and only a CRIADA one is sent for approval$/, (id, status) => `O campo idRec (${id}): a recorrência está ${status}, e só uma recorrência CRIADA é enviada para confirmação.`],
  [/^idRec (\w+): the recurrence is (\w+), and only an APROVADA one is charged$/, (id, status) => `O campo idRec (${id}): a recorrência está ${status}, e só uma recorrência APROVADA é cobrada.`],
  [/^idRec (\w+): a solicitation of this recurrence is already under way$/, (id) => `Existe uma solicitação ativa (em andamento) referente ao mesmo idRec (${id}).`],
  [/^calendario\.dataExpiracaoSolicitacao (\S+) is not after the solicitation's creation \((\S+)\)$/, (at, created) => `O campo calendario.dataExpiracaoSolicitacao (${at}) não é posterior à criação da solicitação (${created}).`],
  [/^calendario\.dataExpiracaoSolicitacao is more than (\d+) days after the solicitation's creation$/, (days) => `O campo calendario.dataExpiracaoSolicitacao está a mais de ${days} dias da criação da solicitação.`],
  [/^The account has no solicitation (\w+)$/, (id) => `A conta não tem a solicitação de recorrência ${id}.`],
  [/^The solicitation (\w+) is (\w+): only one CRIADA, ENVIADA or RECEBIDA can be cancelled$/, (id, status) => `Não é possível cancelar uma solicitação de recorrência com o status diferente de CRIADA, ENVIADA ou RECEBIDA (a solicitação ${id} está ${status}).`],
  [/^calendario\.dataDeVencimento ([\d-]+) is before the charge's creation \(([\d-]+)\)$/, (day, created) => `O campo calendario.dataDeVencimento (${day}) é anterior à data de criação da cobrança (${created}).`],
  [/^calendario\.dataDeVencimento ([\d-]+) is before the recurrence's calendario\.dataInicial \(([\d-]+)\)$/, (day, first) => `O campo calendario.dataDeVencimento (${day}) é anterior ao início da recorrência (calendario.dataInicial ${first}).`],
  [/^calendario\.dataDeVencimento ([\d-]+) is after the recurrence's calendario\.dataFinal \(([\d-]+)\)$/, (day, last) => `O campo calendario.dataDeVencimento (${day}) é posterior ao fim da recorrência (calendario.dataFinal ${last}).`],
  [
    /^calendario\.dataDeVencimento ([\d-]+): a charge that settles on ([\d-]+) is sent from ([\d-]+) to ([\d-]+) \(D-10 to D-2\), and today is ([\d-]+)$/,
    (day, settles, opens, closes, today) => `O campo calendario.dataDeVencimento (${day}): uma cobrança liquidada em ${settles} é enviada de ${opens} a ${closes} (de D-10 a D-2), e hoje é ${today}.`,
  ],
  [
    /^calendario\.dataDeVencimento ([\d-]+): the recurrence already has a charge in this cycle(?: \((\w+)\))? that is neither REJEITADA nor CANCELADA$/,
    (day, txid) => `Existe uma CobR com status diferente de REJEITADA e CANCELADA referente ao mesmo idRec com calendario.dataDeVencimento (${day}) no mesmo ciclo${txid ? ` (${txid})` : ''}.`,
  ],
  [/^recebedor\.conta is not the account of this receiver$/, () => 'O campo recebedor.conta corresponde a uma conta que não pertence a este usuário recebedor.'],
  [/^recebedor\.agencia is not the branch of this receiver$/, () => 'O campo recebedor.agencia corresponde a uma agência que não é a deste usuário recebedor.'],
  [/^txid (\w+) is already used by a charge of this account$/, (txid) => `O campo txid (${txid}) encontra-se em uso.`],
  [/^The account has no recurring charge (\w+)$/, (txid) => `A conta não tem a cobrança recorrente ${txid}.`],
  [/^The recurring charge (\w+) is (\w+): it takes no more changes$/, (txid, status) => `A cobrança recorrente ${txid} está ${status}: não aceita mais alterações.`],
  [
    /^The recurring charge (\w+) can no longer be cancelled: its first attempt settles on ([\d-]+), and a receiver cancels before that day$/,
    (txid, day) => `Não é possível cancelar uma cobrança em uma data igual ou maior que a data prevista da primeira tentativa de liquidação (${day}; cobrança ${txid}).`,
  ],
  [/^The recurrence (\w+) takes no retries \(politicaRetentativa NAO_PERMITE\)$/, (id) => `A política configurada na recorrência (${id}) não permite retentativa de cobrança.`],
  [/^An attempt of the recurring charge (\w+) is (\w+) \(for ([\d-]+)\): a retry waits for it to end$/, (txid, status, day) => `Existe uma tentativa com status ${status} (para ${day}) na cobrança ${txid}.`],
  [/^data (\S+) must be a date \(YYYY-MM-DD\)$/, (day) => `O parâmetro data (${day}) deve ser uma data (AAAA-MM-DD).`],
  [/^data ([\d-]+) is not a future date \(today is ([\d-]+)\)$/, (day, today) => `O parâmetro data (${day}) não corresponde a uma data futura (hoje é ${today}).`],
  [/^data ([\d-]+) is outside the (\d+) days after the due date \(([\d-]+) to ([\d-]+)\)$/, (day, days, from, to) => `O parâmetro data (${day}) está fora dos ${days} dias após o vencimento (${from} a ${to}).`],
  [/^data ([\d-]+) already has an attempt$/, (day) => `Existe uma tentativa vigente para a data informada (${day}).`],
  [/^the charge already had (\d+) retries after its due date$/, (n) => `A cobrança já teve ${n} novas tentativas após o vencimento.`],
  [/^No webhook of recurrences is registered$/, () => 'Nenhum webhook de recorrências está registrado.'],
  [/^No webhook of recurring charges is registered$/, () => 'Nenhum webhook de cobranças recorrentes está registrado.'],
  [/^txid (\w+) names no charge of this account$/, (txid) => `O parâmetro txid (${txid}) não corresponde a uma cobrança da conta.`],
  [/^txid (\w+) is a due-date charge, and the recurrence is started by an immediate one \(journey 3\)$/, (txid) => `O parâmetro txid (${txid}) é uma cobrança com vencimento, e a recorrência é iniciada por uma cobrança imediata (JORNADA_3).`],
  [/^txid (\w+) is not the immediate charge the recurrence names \(ativacao\.dadosJornada\.txid (\w+)\)$/, (txid, named) => `O parâmetro txid (${txid}) não é a cobrança imediata de ativacao.dadosJornada.txid (${named}).`],
  [/^A charge of this account with this txid already exists$/, () => 'A conta já tem uma cobrança com este txid.'],
  [/^The account already has a charge with this txid$/, () => 'A conta já tem uma cobrança com este txid.'],
  [/^An immediate charge \(cob\) of this account has this txid$/, () => 'Uma cobrança imediata (cob) da conta tem este txid.'],
  [/^This txid belongs to a batch \(lotecobv\) in which its charge is EM_PROCESSAMENTO or NEGADA$/, () => 'Este txid pertence a um lote (lotecobv) em que sua cobrança está EM_PROCESSAMENTO ou NEGADA.'],
  [/^The charge is not ATIVA \(it is (\w+)\): only an ATIVA one can be changed$/, (status) => `A cobrança não está ATIVA (está ${status}): só uma cobrança ATIVA pode ser alterada.`],
  [/^[Cc]harge is not ATIVA \(it is (\w+)\)$/, (status) => `A cobrança não está ATIVA (está ${status}).`],
  [/^The charge has no revisao (\d+) \(its current one is (\d+)\)$/, (asked, current) => `A cobrança não tem a revisao ${asked} (a atual é ${current}).`],
  [/^Charge not found(?: for this key)?$/, () => 'Cobrança não encontrada.'],
  [/^A batch sent again must name exactly the charges of its first request$/, () => 'Um lote enviado de novo deve nomear exatamente as cobranças de sua primeira requisição.'],
  [/^The batch's first request did not name: (.+)$/, (txids) => `A primeira requisição do lote não nomeou: ${txids}.`],
  [/^cobsv holds at most (\d+) charges$/, (max) => `O campo cobsv tem no máximo ${max} cobranças.`],
  [/^cobsv names the txid (\w+) more than once$/, (txid) => `O campo cobsv nomeia o txid ${txid} mais de uma vez.`],
  [/^These txids are already used by charges or batches of the account: (.+)$/, (txids) => `Estes txids já são usados por cobranças ou lotes da conta: ${txids}.`],
  [/^inicio and fim are at most (\d+) days apart$/, (days) => `inicio e fim distam no máximo ${days} dias.`],
  [/^fim must not be before inicio$/, () => 'fim não pode ser anterior a inicio.'],
  [/^cpf and cnpj cannot be used together$/, () => 'cpf e cnpj não podem ser usados juntos.'],
  [/^the page size is 1 to (\d+)$/, (max) => `O tamanho da página é de 1 a ${max}.`],
  [/^valor exceeds the amount still refundable of this PIX \(([\d.]+)\)$/, (left) => `O campo valor excede o que ainda pode ser devolvido deste Pix (${left}).`],
  [/^valor exceeds what is still refundable as (\w+) of this PIX \(([\d.]+)\)$/, (nature, left) => `O campo valor excede o que ainda pode ser devolvido como ${nature} deste Pix (${left}).`],
  [/^natureza RETIRADA refunds only a PIX with a withdrawal or change \(saque or troco\)$/, () => 'A natureza RETIRADA devolve apenas um Pix com saque ou troco.'],
  [/^This refund id was already used for this PIX with a different request$/, () => 'Este id de devolução já foi usado para este Pix com outra requisição.'],
  [/^The refund period \((\d+) days after the PIX was received\) has expired$/, (days) => `O prazo de devolução (${days} dias após o recebimento do Pix) expirou.`],
  [/^Refund not found$/, () => 'Devolução não encontrada.'],
  [/^No PIX received by this account has that endToEndId$/, () => 'Nenhum Pix recebido pela conta tem este endToEndId.'],
  [/^Transaction not found$/, () => 'Pix não encontrado.'],
  [/^No webhook is registered for this key$/, () => 'Nenhum webhook está registrado para esta chave.'],
  [/^The key is not one of this account's keys$/, () => 'A chave não é uma das chaves da conta.'],
  [/^webhookUrl: its callbacks go to (\S+), where they cannot be delivered \((.+)\)$/, (callback, why) => `O campo webhookUrl: seus callbacks vão para ${callback}, onde não podem ser entregues (${emPortugues(why).replace(/\.$/, '')}).`],
  [/^non-public address: .*$/, () => 'Endereço não público: o destino está numa faixa privada, de loopback, link-local ou reservada (o operador as permite com WEBHOOK_ALLOW_PRIVATE).'],
  [/^port not allowed: (\d+) .*$/, (port) => `Porta não permitida: ${port} (os destinos usam a porta 443 ou uma que o operador liste em WEBHOOK_ALLOWED_PORTS).`],
  [/^DNS failure: the host name does not resolve$/, () => 'Falha de DNS: o nome do host não resolve.'],
  [/^Account not found$/, () => 'Conta não encontrada.'],
  // Authentication (AcessoNegado).
  [/^Missing access token: send Authorization: Bearer <token>$/, () => 'Token de acesso ausente: envie Authorization: Bearer <token>.'],
  [/^Authorization header must be Bearer <token>$/, () => 'O cabeçalho Authorization deve ser Bearer <token>.'],
  [/^Invalid or expired access token$/, () => 'Token de acesso inválido ou expirado.'],
  [/^Access token expired$/, () => 'Token de acesso expirado.'],
  [/^Access token .*$/, () => 'Token de acesso inválido.'],
  [/^The access token was revoked: the client secret was rotated since it was issued$/, () => 'O token de acesso foi revogado: o client secret foi trocado depois que ele foi emitido.'],
  [/^The access token is bound to a client certificate: present it\..*$/, () => 'O token de acesso está vinculado a um certificado de cliente: apresente-o.'],
  [/^The client certificate does not match the access token$/, () => 'O certificado de cliente não é o do token de acesso.'],
  [/^The certificate of this access token is no longer linked to the account$/, () => 'O certificado deste token de acesso não está mais vinculado à conta.'],
  [/^The certificate of this access token has expired$/, () => 'O certificado deste token de acesso expirou.'],
  [/^The access token does not carry the scope ([\w.-]+)$/, (scope) => `O token de acesso não tem o escopo ${scope}.`],
  [/^X-SSL-Client-Cert .*$/, () => 'O cabeçalho X-SSL-Client-Cert não traz um certificado aceito.'],
  // The framework's refusals and the service's limits.
  [/^Request body is too large$/, () => 'O corpo da requisição é grande demais.'],
  [/^Unsupported media type: send the body as application\/json$/, () => 'Tipo de mídia não suportado: envie o corpo como application/json.'],
  [/^Body is not valid JSON$/, () => 'O corpo não é um JSON válido.'],
  [/^Body is empty but content-type is application\/json$/, () => 'O corpo está vazio, mas o content-type é application/json.'],
  [/^The URL is not valid \(bad percent-encoding\)$/, () => 'A URL não é válida (codificação percentual incorreta).'],
  [/^A path parameter is too long$/, () => 'Um parâmetro do caminho é longo demais.'],
  [/^A value in the request is not acceptable$/, () => 'Um valor da requisição não é aceitável.'],
  [/^(\w+) must not nest more than (\d+) levels deep$/, (part, levels) => `${part} não pode ter mais de ${levels} níveis de aninhamento.`],
  [/^(\w+).* must not contain NUL characters or unpaired surrogates$/, (part) => `${part} não pode conter caracteres NUL nem surrogates sem par.`],
  [/^The service is briefly unavailable; retry.*$/, () => 'O serviço está indisponível por um instante: tente de novo (com a mesma x-idempotency-key).'],
  [/^Too many .*$/, () => 'Requisições demais: tente de novo mais tarde.'],
  [/^At most (\d+) resends per minute$/, (max) => `No máximo ${max} reenvios por minuto.`],
  [/^Internal server error$/, () => 'Condição inesperada ao processar a requisição.'],
];

function razao(reason: string): string {
  for (const [pattern, say] of RAZOES) {
    const found = pattern.exec(reason);
    if (found) return say(...found.slice(1));
  }
  return `não respeita as regras (${reason.replace(/[^\w.]/g, ' ').trim().split(/\s+/).slice(0, 3).join(' ')})`;
}

/**
 * A sentence of the core in Portuguese: one this view knows, with its fields and values, or else
 * what it refused, by `code` (the core's stable name for it).
 */
export function emPortugues(message: string, code?: string): string {
  for (const [pattern, say] of FRASES) {
    const found = pattern.exec(message);
    if (!found) continue;
    const said = say(...found.slice(1));
    if (!said.includes('não respeita as regras (')) return said;
  }
  return code ? `A requisição foi recusada por uma regra do serviço (${code}).` : 'A requisição foi recusada por uma regra do serviço.';
}

/** Words that say a sentence is English: what a test of the `/v2` problems looks for. */
export const ENGLISH = /\b(the|must|is|are|not|of|with|and|or|this|that|an|to|be|found|required|invalid|already|cannot|should|has|have|was)\b/i;
